// Merging per-rank databases into one.
#include "store/merge.hpp"

#include <gtest/gtest.h>

#include <filesystem>

#include "core/error.hpp"
#include "store/run_reader.hpp"
#include "store/run_writer.hpp"
#include "store/sqlite.hpp"
#include "store_test_data.hpp"
#include "support/planted_links.hpp"
#include "support/process.hpp"
#include "support/refusal.hpp"

namespace gpuscope::store {
namespace {

using gpuscope::testing::leftovers;
using gpuscope::testing::PlantedLinks;
using gpuscope::testing::predictable_temporary_names;
using gpuscope::testing::TempDir;
using namespace store::testing;

// A rank's database: 2 GPUs × `ticks` samples, 1 power sample, 1 event and 2 output lines.
void write_rank(const std::string& path, int rank, int ticks) {
  RunInfo run = make_run(rank, "node" + std::to_string(rank));
  run.start_wall_ns += rank;
  auto writer = RunWriter::create(path, false, run, make_devices(2));
  for (int seq = 0; seq < ticks; ++seq) {
    for (unsigned device = 0; device < 2; ++device) writer->push(make_sample(device, seq));
  }
  writer->push(PowerRow{1, 5, 6, 250.0, 260.0, 1e12});
  writer->push(Event{1, 2, std::nullopt, EventKind::JobStart, "rank " + std::to_string(rank)});
  writer->push(OutputLine{3, 4, OutputStream::Stdout, "hello from " + std::to_string(rank)});
  writer->push(OutputLine{5, 6, OutputStream::Stderr, "bye"});
  RunEnd end;
  end.exit_code = rank;
  writer->finish(end);
}

Error merge_error(const std::string& output, const std::vector<std::filesystem::path>& inputs) {
  return gpuscope::testing::refusal([&] { merge(output, inputs, false); });
}

TEST(Merge, CombinesThreeRanks) {
  TempDir dir;
  for (int rank = 0; rank < 3; ++rank) {
    write_rank(dir.file("ranks/rank" + std::to_string(rank) + ".db"), rank, 10 + rank);
  }
  const auto summary = merge(
      dir.file("job.db"),
      {dir.file("ranks/rank2.db"), dir.file("ranks/rank0.db"), dir.file("ranks/rank1.db")}, false);
  EXPECT_EQ(summary.runs, 3);
  EXPECT_EQ(summary.rows.samples, 2 * (10 + 11 + 12));
  EXPECT_EQ(summary.rows.power_samples, 3);
  EXPECT_EQ(summary.rows.events, 3);
  EXPECT_EQ(summary.rows.output_lines, 6);

  auto reader = RunReader::open(dir.file("job.db"));
  const auto runs = reader.runs();
  ASSERT_EQ(runs.size(), 3U);
  const int ranks_in_input_order[] = {2, 0, 1};
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const int rank = ranks_in_input_order[i];
    EXPECT_EQ(runs[i].run_id, static_cast<std::int64_t>(i + 1)) << "renumbered in input order";
    EXPECT_EQ(runs[i].info.slurm.rank, rank);
    EXPECT_EQ(runs[i].info.host, "node" + std::to_string(rank));
    EXPECT_EQ(runs[i].end.exit_code, rank);
    EXPECT_EQ(reader.devices(runs[i].run_id).size(), 2U);
    EXPECT_EQ(reader.count_samples({runs[i].run_id, std::nullopt}), 2 * (10 + rank));
    auto output = reader.output({runs[i].run_id, std::nullopt});
    RunOutputLine line;
    ASSERT_TRUE(output.next(line));
    EXPECT_EQ(line.run_id, runs[i].run_id);
    EXPECT_EQ(line.line.text, "hello from " + std::to_string(rank));
  }
  EXPECT_EQ(reader.count_samples(), 2 * (10 + 11 + 12));
}

TEST(Merge, TakesEveryDatabaseInADirectory) {
  TempDir dir;
  for (int rank = 0; rank < 3; ++rank) {
    write_rank(dir.file("ranks/rank" + std::to_string(rank) + ".db"), rank, 4);
  }
  const auto summary = merge(dir.file("ranks/job.db"), {dir.file("ranks")}, false);
  EXPECT_EQ(summary.inputs.size(), 3U);
  const auto runs = RunReader::open(dir.file("ranks/job.db")).runs();
  ASSERT_EQ(runs.size(), 3U);
  EXPECT_EQ(runs[0].info.slurm.rank, 0);
  EXPECT_EQ(runs[2].info.slurm.rank, 2);
  EXPECT_FALSE(std::filesystem::exists(dir.file("ranks/job.db.partial")));
}

TEST(Merge, MergedDatabasesMergeAgain) {
  TempDir dir;
  for (int rank = 0; rank < 3; ++rank) write_rank(dir.file(std::to_string(rank) + ".db"), rank, 2);
  merge(dir.file("ab.db"), {dir.file("0.db"), dir.file("1.db")}, false);
  const auto summary = merge(dir.file("all.db"), {dir.file("ab.db"), dir.file("2.db")}, false);
  EXPECT_EQ(summary.runs, 3);
  EXPECT_EQ(RunReader::open(dir.file("all.db")).count_samples(), 12);
}

TEST(Merge, RefusesTheSameRunTwice) {
  TempDir dir;
  write_rank(dir.file("rank0.db"), 0, 3);
  std::filesystem::copy_file(dir.file("rank0.db"), dir.file("copy.db"));
  const auto e = merge_error(dir.file("job.db"), {dir.file("rank0.db"), dir.file("copy.db")});
  EXPECT_EQ(e.summary(),
            dir.file("rank0.db") + " and " + dir.file("copy.db") + " hold the same run");
  EXPECT_NE(e.reason().find("SLURM job 4242 step 0 rank 0"), std::string::npos) << e.reason();
  EXPECT_EQ(e.exit_code(), 2);
  EXPECT_FALSE(std::filesystem::exists(dir.file("job.db"))) << "no half-merged output";
  EXPECT_FALSE(std::filesystem::exists(dir.file("job.db.partial")));
}

TEST(Merge, RefusesANewerSchema) {
  TempDir dir;
  write_rank(dir.file("rank0.db"), 0, 1);
  write_rank(dir.file("rank1.db"), 1, 1);
  {
    Database db(dir.file("rank1.db"), SQLITE_OPEN_READWRITE);
    db.exec("PRAGMA user_version = 7");
  }
  const auto e = merge_error(dir.file("job.db"), {dir.file("rank0.db"), dir.file("rank1.db")});
  EXPECT_EQ(e.summary(), dir.file("rank1.db") + " was written by a newer gpuscope");
  EXPECT_FALSE(std::filesystem::exists(dir.file("job.db")));
}

TEST(Merge, RefusesAnExistingOutput) {
  TempDir dir;
  write_rank(dir.file("rank0.db"), 0, 1);
  write_rank(dir.file("job.db"), 1, 1);
  const auto e = merge_error(dir.file("job.db"), {dir.file("rank0.db")});
  EXPECT_EQ(e.summary(), dir.file("job.db") + " exists");
  EXPECT_EQ(merge(dir.file("job.db"), {dir.file("rank0.db")}, true).runs, 1);
  EXPECT_EQ(RunReader::open(dir.file("job.db")).runs().at(0).info.slurm.rank, 0);
}

TEST(Merge, AFailedMergeKeepsTheOutputItWouldReplace) {
  TempDir dir;
  write_rank(dir.file("rank0.db"), 0, 1);
  write_rank(dir.file("job.db"), 5, 1);
  EXPECT_THROW(merge(dir.file("job.db"), {dir.file("rank0.db"), dir.file("rank0.db")}, true),
               Error);
  EXPECT_EQ(RunReader::open(dir.file("job.db")).runs().at(0).info.slurm.rank, 5);
}

// Every row of every table but meta's created_at, as text: two files hold the same when equal.
std::vector<std::string> content(const std::filesystem::path& path) {
  Database db(path, SQLITE_OPEN_READONLY);
  std::vector<std::string> tables;
  {
    Statement list =
        db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name");
    while (list.step()) tables.push_back(list.text(0));
  }
  std::vector<std::string> out;
  Statement schema = db.prepare("SELECT type, name, sql FROM sqlite_schema ORDER BY type, name");
  while (schema.step()) out.push_back(schema.text(0) + " " + schema.text(1) + " " + schema.text(2));
  for (const auto& table : tables) {
    const int columns =
        1 +
        static_cast<int>(
            db.query_int("SELECT count(*) FROM pragma_table_info('" + table + "')").value_or(0));
    Statement rows = db.prepare("SELECT rowid, * FROM " + table + " ORDER BY rowid");
    while (rows.step()) {
      std::string line = table;
      for (int c = 0; c < columns; ++c) {
        line += rows.is_null(c) ? "|NULL" : "|" + rows.text(c);
      }
      if (table == "meta" && line.find("created_at") != std::string::npos) continue;
      out.push_back(line);
    }
  }
  return out;
}

TEST(MergeParts, MovesOnePartThatIsWhatMergeWouldWrite) {
  TempDir dir;
  write_rank(dir.file("a.db"), 0, 700);  // several chunks per GPU
  std::filesystem::copy_file(dir.file("a.db"), dir.file("part.db"));
  const auto merged = merge(dir.file("merged.db"), {dir.file("a.db")}, false);
  const auto moved = merge_parts(dir.file("moved.db"), {dir.file("part.db")}, false);
  EXPECT_FALSE(std::filesystem::exists(dir.file("part.db"))) << "moved, not copied";
  EXPECT_EQ(moved.runs, merged.runs);
  EXPECT_EQ(moved.rows.samples, merged.rows.samples);
  EXPECT_EQ(moved.rows.power_samples, merged.rows.power_samples);
  EXPECT_EQ(moved.rows.events, merged.rows.events);
  EXPECT_EQ(moved.rows.output_lines, merged.rows.output_lines);
  EXPECT_EQ(content(dir.file("moved.db")), content(dir.file("merged.db")));
}

TEST(MergeParts, MergesAPartWhoseSamplesLackChunks) {
  TempDir dir;
  write_rank(dir.file("a.db"), 0, 700);
  {
    Database db(dir.file("a.db"), SQLITE_OPEN_READWRITE);
    db.exec("DELETE FROM sample_chunks WHERE device_index = 1");
  }
  std::filesystem::copy_file(dir.file("a.db"), dir.file("part.db"));
  merge(dir.file("merged.db"), {dir.file("a.db")}, false);
  merge_parts(dir.file("out.db"), {dir.file("part.db")}, false);
  const auto out = content(dir.file("out.db"));
  EXPECT_EQ(out, content(dir.file("merged.db")));
  EXPECT_NE(out, content(dir.file("part.db"))) << "the missing chunks were built";
}

TEST(MergeParts, MergesSeveralPartsAndKeepsTheChecks) {
  TempDir dir;
  write_rank(dir.file("parts/0.db"), 0, 10);
  write_rank(dir.file("parts/1.db"), 1, 10);
  const auto summary =
      merge_parts(dir.file("out.db"), {dir.file("parts/0.db"), dir.file("parts/1.db")}, false);
  EXPECT_EQ(summary.runs, 2);
  write_rank(dir.file("existing.db"), 2, 10);
  EXPECT_THROW(merge_parts(dir.file("existing.db"), {dir.file("parts/0.db")}, false), Error);
  EXPECT_TRUE(std::filesystem::exists(dir.file("parts/0.db"))) << "a refused part stays";
}

// SQLite opens (and follows links at) the file it creates and its -journal. In a folder
// others may write, links planted at every name the old scheme used (".<name>.<pid>.gpuscope-tmp"
// and its companions) and at guessable ones are never written through nor removed: the merged
// database is built in a private folder beside the output.
TEST(Merge, PlantedLinksAtTemporaryNamesAreNeverFollowed) {
  TempDir dir;
  write_rank(dir.file("ranks/0.db"), 0, 700);
  write_rank(dir.file("ranks/1.db"), 1, 10);
  std::filesystem::copy_file(dir.file("ranks/0.db"), dir.file("part.db"));
  merge(dir.file("reference.db"), {dir.file("ranks/0.db")}, false);
  std::filesystem::create_directory(dir.file("shared"));
  auto names = predictable_temporary_names(dir.file("shared/job.db"));
  for (auto& name : predictable_temporary_names(dir.file("shared/moved.db"))) {
    names.push_back(std::move(name));
  }
  const PlantedLinks links(dir.file("victim"), names);

  const auto merged =
      merge(dir.file("shared/job.db"), {dir.file("ranks/0.db"), dir.file("ranks/1.db")}, false);
  EXPECT_EQ(merged.runs, 2);
  merge_parts(dir.file("shared/moved.db"), {dir.file("part.db")}, false);  // moved into place
  EXPECT_FALSE(std::filesystem::exists(dir.file("part.db")));

  EXPECT_TRUE(links.victim_untouched());
  EXPECT_EQ(RunReader::open(dir.file("shared/job.db")).runs().size(), 2U);
  EXPECT_EQ(content(dir.file("shared/moved.db")), content(dir.file("reference.db")));
  EXPECT_EQ(leftovers(dir.file("shared"), links, {"job.db", "moved.db"}),
            std::vector<std::string>{});
}

}  // namespace
}  // namespace gpuscope::store
