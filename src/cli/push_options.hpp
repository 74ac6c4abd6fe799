// `--push URL` and its companions, shared by `profile` and `serve`: checked before anything
// starts, then turned into a running Pusher.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "app/profile/push.hpp"

namespace gpuscope::cli {

void add_push_options(CLI::App& app, app::PushOptions& options);

}  // namespace gpuscope::cli
