#include "guard/running_jobs.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "fleet/sacct_jobs.hpp"
#include "ingest/monitoring/slurm_accounting.hpp"

namespace gpuscope::guard {
namespace {

struct Unreadable {
  std::string why;
};

// A number in either shape: 42, or {"set": true, "infinite": false, "number": 42}. Absent for
// null, an unset or infinite number.
std::optional<std::int64_t> number(const nlohmann::json& job, const char* key) {
  const auto found = job.find(key);
  if (found == job.end() || found->is_null()) return std::nullopt;
  if (found->is_number_integer()) return found->get<std::int64_t>();
  if (found->is_object()) {
    const auto set = found->find("set");
    const auto infinite = found->find("infinite");
    const auto value = found->find("number");
    if (set == found->end() || !set->is_boolean() || value == found->end() ||
        !value->is_number_integer()) {
      throw Unreadable{fmt::format("'{}' is an object without set and number", key)};
    }
    if (!set->get<bool>()) return std::nullopt;
    if (infinite != found->end() && infinite->is_boolean() && infinite->get<bool>()) {
      return std::nullopt;
    }
    return value->get<std::int64_t>();
  }
  if (found->is_string() &&
      (found->get<std::string>() == "N/A" || found->get<std::string>().empty())) {
    return std::nullopt;
  }
  throw Unreadable{fmt::format("'{}' is {}, not a number", key, found->dump().substr(0, 40))};
}

std::string text(const nlohmann::json& job, const char* key, bool required) {
  const auto found = job.find(key);
  if (found == job.end() || found->is_null()) {
    if (required) throw Unreadable{fmt::format("it has no '{}'", key)};
    return {};
  }
  if (!found->is_string()) throw Unreadable{fmt::format("'{}' is not a text", key)};
  return found->get<std::string>();
}

// The state word: "RUNNING", or the first of ["RUNNING", "COMPLETING"...] (the base state first).
std::vector<std::string> states(const nlohmann::json& job) {
  const auto found = job.find("job_state");
  if (found == job.end()) throw Unreadable{"it has no 'job_state'"};
  if (found->is_string()) return {found->get<std::string>()};
  if (found->is_array()) {
    std::vector<std::string> out;
    for (const auto& item : *found) {
      if (!item.is_string()) throw Unreadable{"'job_state' holds a value that is not a word"};
      out.push_back(item.get<std::string>());
    }
    return out;
  }
  throw Unreadable{"'job_state' is neither a word nor a list of words"};
}

std::string shown_id(const nlohmann::json& job, std::int64_t id) {
  const auto array_job = number(job, "array_job_id");
  const auto array_task = number(job, "array_task_id");
  if (array_job && *array_job != 0 && array_task) {
    return fmt::format("{}_{}", *array_job, *array_task);
  }
  const auto het_job = number(job, "het_job_id");
  const auto het_offset = number(job, "het_job_offset");
  if (het_job && *het_job != 0 && het_offset) return fmt::format("{}+{}", *het_job, *het_offset);
  return std::to_string(id);
}

enum class Kind { Job, NotRunning, NoGpus };

Kind read_job(const nlohmann::json& record, RunningJob& job) {
  if (!record.is_object()) throw Unreadable{"it is not an object"};
  const auto id = number(record, "job_id");
  if (!id || *id <= 0) throw Unreadable{"it has no job_id"};
  job.id = std::to_string(*id);
  job.shown_id = shown_id(record, *id);
  const auto state = states(record);
  if (state.empty() || state.front() != "RUNNING") return Kind::NotRunning;
  job.user = text(record, "user_name", true);
  job.account = text(record, "account", false);
  job.partition = text(record, "partition", false);
  job.qos = text(record, "qos", false);
  job.name = text(record, "name", false);
  const auto start = number(record, "start_time");
  if (!start || *start <= 0) throw Unreadable{"a running job without a start_time"};
  job.start_ms = *start * 1000;
  if (const auto limit = number(record, "time_limit")) job.time_limit_s = *limit * 60;
  const std::string tres = text(record, "tres_alloc_str", false);
  const auto gpus = ingest::allocated_gpus(tres);
  if (!gpus || *gpus <= 0) return Kind::NoGpus;
  job.gpus = *gpus;
  job.gpu_model = fleet::allocated_gpu_type(tres);
  job.nodes = ingest::expand_hostlist(text(record, "nodes", true));
  if (job.nodes.empty()) throw Unreadable{"a running job on no nodes"};
  if (const auto batch = record.find("batch_flag"); batch != record.end() && batch->is_boolean()) {
    job.batch = batch->get<bool>();
  }
  return Kind::Job;
}

std::string version_of(const nlohmann::json& meta) {
  for (const char* key : {"Slurm", "slurm"}) {
    const auto slurm = meta.find(key);
    if (slurm == meta.end() || !slurm->is_object()) continue;
    const auto release = slurm->find("release");
    if (release != slurm->end() && release->is_string()) return release->get<std::string>();
  }
  return {};
}

void note_unreadable(SqueueRead& read, const RunningJob& job, const std::string& why) {
  ++read.unreadable_count;
  if (read.unreadable.size() < 5) {
    read.unreadable.push_back(fmt::format("job {}: {}", job.id.empty() ? "?" : job.id, why));
  }
}

}  // namespace

std::vector<std::string> squeue_arguments() {
  return {"--json", "--states=RUNNING"};
}

SqueueRead read_squeue_json(std::string_view text_in) {
  nlohmann::json answer = nlohmann::json::parse(text_in, nullptr, false);
  if (answer.is_discarded() || !answer.is_object() || !answer.contains("jobs") ||
      !answer["jobs"].is_array()) {
    throw Error("squeue --json printed something that is not its JSON (no list of jobs)",
                std::string(text_in.substr(0, 120)),
                "run guard where squeue --json works (Slurm 20.11 or later, with its "
                "serializer/json plugin: Debian's slurm-client has it)");
  }
  SqueueRead read;
  if (const auto meta = answer.find("meta"); meta != answer.end() && meta->is_object()) {
    read.slurm_version = version_of(*meta);
  }
  if (const auto errors = answer.find("errors"); errors != answer.end() && errors->is_array()) {
    for (const auto& error : *errors) read.errors.push_back(error.dump().substr(0, 300));
  }
  for (const auto& record : answer["jobs"]) {
    RunningJob job;
    try {
      switch (read_job(record, job)) {
        case Kind::Job:
          read.jobs.push_back(std::move(job));
          break;
        case Kind::NotRunning:
          ++read.not_running;
          break;
        case Kind::NoGpus:
          ++read.without_gpus;
          break;
      }
    } catch (const Unreadable& e) {
      note_unreadable(read, job, e.why);
    } catch (const Error& e) {
      note_unreadable(read, job, e.what());
    }
  }
  return read;
}

}  // namespace gpuscope::guard
