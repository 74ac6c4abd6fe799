// The admins' daily digest (docs/guard.md, "Notices"): once a day, at the rules' digest_hour
// (local time) or the first cycle after it, what guard did in the last 24 hours from its audit:
// the counts per action and outcome, every cancel and drain with its reason, what failed or was
// held back. Sent to the admins like any notice (once: the day is claimed in the state).
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "app/guard/guard_steps.hpp"
#include "store/guard_state.hpp"

namespace gpuscope::app {

// The digest's words for `audit` (the last day's records), for `cluster`.
guard::Notice digest_notice(const std::string& cluster, std::span<const store::GuardAudit> audit,
                            std::int64_t now_ms);

// Sends the day's digest when it is due at `now_ms`; true when it went (or, in a dry run, was
// said).
bool send_digest_when_due(GuardContext& c, std::int64_t now_ms);

}  // namespace gpuscope::app
