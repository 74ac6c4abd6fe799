#include "trace/sidecar_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string_view>
#include <system_error>

#include "core/error.hpp"

namespace gpuscope::trace {
namespace {

namespace fs = std::filesystem;

// No record gpuscope writes comes near this; a larger size means a damaged file.
constexpr std::uint32_t kMaxPayload = 1U << 20;

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

// Walks the records of a file: next() fills the type and payload of the next whole record.
class RecordWalker {
 public:
  explicit RecordWalker(const fs::path& file) : file_(file) {
    stream_.reset(std::fopen(file.c_str(), "rb"));
    if (!stream_) {
      throw Error(fmt::format("cannot read the trace file {}", file.string()), std::strerror(errno),
                  "check the trace directory's permissions");
    }
    FileHeader header{};
    if (std::fread(&header, sizeof(header), 1, stream_.get()) != 1 ||
        std::memcmp(header.magic, kSidecarMagic, sizeof(header.magic)) != 0) {
      throw Error(fmt::format("{} is not a gpuscope trace file", file.string()),
                  "it does not start with the GSTRACE header",
                  "leave only the files libgpuscope_cupti.so wrote in the trace directory");
    }
    if (header.version != kSidecarVersion) {
      throw Error(fmt::format("{} is a trace file of version {}", file.string(), header.version),
                  fmt::format("this gpuscope reads version {}", kSidecarVersion),
                  "import it with the gpuscope whose library wrote it");
    }
  }

  // False at the end of the file or at a record cut short (truncated() says which).
  bool next(RecordType& type, std::vector<std::uint8_t>& payload) {
    RecordHeader header{};
    const std::size_t got = std::fread(&header, 1, sizeof(header), stream_.get());
    if (got == 0) return false;
    if (got != sizeof(header) || header.size > kMaxPayload) {
      truncated_ = true;
      return false;
    }
    payload.resize(padded_size(header.size));
    if (!payload.empty() && std::fread(payload.data(), payload.size(), 1, stream_.get()) != 1) {
      truncated_ = true;
      return false;
    }
    payload.resize(header.size);
    type = static_cast<RecordType>(header.type);
    return true;
  }

  bool truncated() const { return truncated_; }

 private:
  fs::path file_;
  std::unique_ptr<std::FILE, FileCloser> stream_;
  bool truncated_ = false;
};

// The fixed part of a payload, or nullopt when it is too short.
template <typename Record>
std::optional<Record> fixed_part(const std::vector<std::uint8_t>& payload) {
  if (payload.size() < sizeof(Record)) return std::nullopt;
  Record record;
  std::memcpy(&record, payload.data(), sizeof(Record));
  return record;
}

template <typename Record>
std::string tail_of(const std::vector<std::uint8_t>& payload) {
  if (payload.size() <= sizeof(Record)) return {};
  return std::string(reinterpret_cast<const char*>(payload.data()) + sizeof(Record),
                     payload.size() - sizeof(Record));
}

std::string joined_arguments(std::string text) {
  while (!text.empty() && text.back() == '\0') text.pop_back();
  std::replace(text.begin(), text.end(), '\0', ' ');
  return text;
}

}  // namespace

SidecarMeta read_sidecar_meta(const fs::path& file) {
  SidecarMeta meta;
  meta.file = file;
  RecordWalker walker(file);
  RecordType type{};
  std::vector<std::uint8_t> payload;
  while (walker.next(type, payload)) {
    switch (type) {
      case RecordType::Process:
        if (auto r = fixed_part<ProcessRecord>(payload)) {
          r->host[sizeof(r->host) - 1] = '\0';
          meta.process = *r;
          meta.command = joined_arguments(tail_of<ProcessRecord>(payload));
        }
        break;
      case RecordType::Calibration:
        if (auto r = fixed_part<CalibrationRecord>(payload)) meta.calibrations.push_back(*r);
        break;
      case RecordType::Device:
        if (auto r = fixed_part<DeviceRecord>(payload)) {
          SidecarDevice& d = meta.devices[r->cuda_device];
          d.cuda_device = r->cuda_device;
          if ((r->flags & kDeviceHasUuid) != 0) {
            d.uuid.emplace();
            std::memcpy(d.uuid->data(), r->uuid, 16);
            d.mig = (r->flags & kDeviceMig) != 0;
          }
          if ((r->flags & kDeviceHasPci) != 0) {
            d.pci = PciAddress{r->pci_domain, r->pci_bus, r->pci_device};
          }
          const std::string name = tail_of<DeviceRecord>(payload);
          if (!name.empty()) d.name = name;
        }
        break;
      case RecordType::Name:
        if (auto r = fixed_part<NameRecord>(payload)) {
          meta.names[r->name_id] = tail_of<NameRecord>(payload);
        }
        break;
      case RecordType::MarkerName:
        if (auto r = fixed_part<NameRecord>(payload)) {
          meta.marker_names[r->name_id] = tail_of<NameRecord>(payload);
        }
        break;
      case RecordType::MarkerData:
        if (auto r = fixed_part<MarkerDataRecord>(payload)) meta.marker_data[r->id] = *r;
        break;
      case RecordType::Marker:
        ++meta.markers;
        break;
      case RecordType::Kernel:
        ++meta.kernels;
        break;
      case RecordType::Memcpy:
        ++meta.memcpys;
        break;
      case RecordType::Memset:
        ++meta.memsets;
        break;
      case RecordType::Dropped:
        if (auto r = fixed_part<DroppedRecord>(payload)) meta.dropped += r->count;
        break;
      case RecordType::Note:
        meta.notes.emplace_back(payload.begin(), payload.end());
        break;
      case RecordType::End:
        meta.ended = true;
        if (auto r = fixed_part<EndRecord>(payload)) meta.end_mono_ns = r->mono_ns;
        break;
      default:
        meta.unknown_records = true;
        break;
    }
  }
  meta.truncated = walker.truncated();
  std::stable_sort(meta.calibrations.begin(), meta.calibrations.end(),
                   [](const CalibrationRecord& a, const CalibrationRecord& b) {
                     return a.cupti_ns < b.cupti_ns;
                   });
  return meta;
}

void for_each_activity(const fs::path& file, ActivityVisitor& visitor) {
  RecordWalker walker(file);
  RecordType type{};
  std::vector<std::uint8_t> payload;
  while (walker.next(type, payload)) {
    switch (type) {
      case RecordType::Kernel:
        if (auto r = fixed_part<KernelRecord>(payload)) visitor.kernel(*r);
        break;
      case RecordType::Memcpy:
        if (auto r = fixed_part<MemcpyRecord>(payload)) visitor.memcpy(*r);
        break;
      case RecordType::Memset:
        if (auto r = fixed_part<MemsetRecord>(payload)) visitor.memset(*r);
        break;
      case RecordType::Marker:
        if (auto r = fixed_part<MarkerRecord>(payload)) visitor.marker(*r);
        break;
      default:
        break;
    }
  }
}

std::vector<fs::path> sidecar_files(const fs::path& dir) {
  std::vector<fs::path> files;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return files;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_regular_file() && entry.path().extension() == kSidecarExtension) {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace gpuscope::trace
