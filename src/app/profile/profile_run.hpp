// The work of `gpuscope profile`, once its options are parsed.
#pragma once

#include "app/profile/profile_options.hpp"

namespace gpuscope::app {

// Profiles the command and returns its exit status as a shell would (the process exit code).
// Throws Error::usage for bad input found before the job starts.
int run_profile(const ProfileOptions& options);

}  // namespace gpuscope::app
