// Report writers: whatever a submission printed, the JSON parses, the XML is well formed, the
// console shows no escape sequence; report files are replaced atomically and never written
// through a link, into a FIFO, a directory, a socket or a device. (The command line: test_command_line.cpp.)
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "reports.hpp"
#include "xml_check.hpp"

using namespace gpulab::grade;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

Report sample() {
  Report r;
  r.backend = "emu";
  r.device = "gpulab CPU emulator";
  r.seed = "42";
  LabResult l;
  l.lab = "01-coalescing";
  l.impl = "submission";
  l.source = "/tmp/a \"quoted\" path.cu";
  l.isolation = "bubblewrap";
  l.checks.push_back({"correctness.tiny", "correctness", true, "0.1", "1", "error/tolerance", "", 1, 1});
  l.checks.push_back({"performance.bw", "performance", false, "nan", "0.6", "", "line1\n<tag> & \"q\"\ttab\x01", 0, 3});
  l.score = 1;
  l.max_score = 4;
  r.labs.push_back(l);
  return r;
}

/// Every byte a hostile submission might print: invalid UTF-8 (a stray byte, an overlong NUL, a
/// surrogate, a cut sequence), NUL, escape sequences that clear the screen, move the cursor and
/// set the title, \r, DEL, an 8-bit CSI, U+FFFE, a right-to-left override, and a fake table row.
const std::string kHostile = std::string("bad \xff \xc0\x80 \xed\xa0\x80 nul[") + '\0' +
                             "] \x1b[2J\x1b[H\x1b]0;title\x07\x1b[1A\rgone \x7f \xc2\x9b"
                             "2J \xef\xbf\xbe "
                             "\xe2\x80\xae"
                             "desrever | fake | cell <b>\n  pass  correctness.fake    1.00/1.00 \xe2\x82";

Report hostile() {
  Report r = sample();
  LabResult& l = r.labs[0];
  l.source += kHostile;
  l.info[kHostile] = kHostile;
  l.metrics.push_back({kHostile, kHostile, kHostile, "global", "load", "1", "nan", kHostile});  // short, too
  l.checks.push_back({"correctness." + kHostile, kHostile, false, kHostile, "1", kHostile, kHostile, 0, 1});
  r.device += kHostile;
  return r;
}

std::string read(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

/// A fresh directory for one test.
fs::path scratch(const std::string& name) {
  const fs::path dir = fs::path(testing::TempDir()) / ("gpulab-reports-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

bool valid_utf8(const std::string& s) {
  try {
    (void)json(s).dump();  // nlohmann's strict handler throws on invalid UTF-8
    return true;
  } catch (const json::exception&) {
    return false;
  }
}

/// Runs `f` on another thread; fails (and unblocks a writer stuck on `fifo`) when it hangs.
template <class F>
void without_hanging(const std::string& fifo, F f) {
  auto done = std::async(std::launch::async, f);
  if (done.wait_for(std::chrono::seconds(10)) == std::future_status::ready) return done.get();
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  done.wait();
  if (reader >= 0) ::close(reader);
  FAIL() << "writing to the FIFO " << fifo << " hung";
}

}  // namespace

TEST(Sanitise, InvalidUtf8BecomesReplacementCharacters) {
  const std::string fffd = "\xef\xbf\xbd";
  EXPECT_EQ(clean_text("a\xff"
                       "b"),
            "a" + fffd + "b");
  EXPECT_EQ(clean_text("\xc0\x80"), fffd + fffd);                        // overlong NUL
  EXPECT_EQ(clean_text("\xed\xa0\x80"), fffd + fffd + fffd);             // a surrogate
  EXPECT_EQ(clean_text("x\xe2\x82"), "x" + fffd);                        // cut short
  EXPECT_EQ(clean_text("\xf4\x90\x80\x80"), fffd + fffd + fffd + fffd);  // above U+10FFFF
  EXPECT_EQ(clean_text("é ✓ 𝄞"), "é ✓ 𝄞");
}

TEST(Sanitise, ControlsAndEscapeSequencesGo) {
  EXPECT_EQ(clean_text(std::string("x\0y\x01\x7f", 5)), "xy");
  EXPECT_EQ(clean_text("\x1b[2J\x1b[31mred\x1b[0m"), "red");
  EXPECT_EQ(clean_text("\x1b]0;title\x07"
                       "after"),
            "after");
  EXPECT_EQ(clean_text("\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\"), "link");
  EXPECT_EQ(clean_text("\x1b"
                       "c\x1b(B"
                       "ok"),
            "ok");  // reset; character set
  EXPECT_EQ(clean_text("\xc2\x9b"
                       "2Jok"),
            "ok");  // the 8-bit CSI
  EXPECT_EQ(clean_text("\x1b]unterminated\nnext line"), "\nnext line");
  EXPECT_EQ(clean_text("tab\tnl\ncr\r"), "tab\tnl\ncr\r");
  EXPECT_EQ(console_text("tab\tnl\ncr\r", false), "tab\tnl\ncr");
  EXPECT_EQ(console_text("tab\tnl\ncr\r", true), "tab nl cr");
  EXPECT_EQ(console_text("a\xe2\x80\xae"
                         "b",
                         true),
            "ab");  // right-to-left override
  EXPECT_EQ(xml_text("<&>\"'\xef\xbf\xbe"), "&lt;&amp;&gt;&quot;&apos;");
}

TEST(Sanitise, LongTextIsCutAtACharacterBoundary) {
  EXPECT_EQ(clean_text(std::string(5000, 'x')), std::string(4096, 'x') + "... (904 more bytes)");
  std::string euros;
  for (int i = 0; i < 2000; ++i) euros += "€";  // 3 bytes each: 4096 is not a boundary
  const std::string cut = clean_text(euros);
  EXPECT_TRUE(valid_utf8(cut));
  EXPECT_NE(cut.find("... (1905 more bytes)"), std::string::npos) << cut.substr(4000);
  EXPECT_EQ(clean_text("short", 3), "sho... (2 more bytes)");
}

TEST(Sanitise, TheReportsDefenceSwitchTurnsItOff) {
  ::setenv("GPULAB_GRADER_DISABLE", "reports", 1);
  const std::string raw = console_text("\x1b[2J", true);
  ::unsetenv("GPULAB_GRADER_DISABLE");
  EXPECT_EQ(raw, "\x1b[2J");
  EXPECT_EQ(console_text("\x1b[2J", true), "");
}

TEST(Reports, JUnitIsWellFormedAndCountsFailures) {
  const std::string path = testing::TempDir() + "report.xml";
  write_junit(sample(), path);
  const std::string x = read(path);
  std::string why;
  EXPECT_TRUE(well_formed_xml(x, why)) << why << "\n" << x;
  EXPECT_NE(x.find("tests=\"2\" failures=\"1\""), std::string::npos) << x;
  EXPECT_NE(x.find("<failure"), std::string::npos);
  EXPECT_NE(x.find("&lt;tag&gt; &amp; &quot;q&quot;"), std::string::npos) << x;
}

TEST(Reports, TheXmlCheckerRejectsBrokenXml) {
  std::string why;
  for (const std::string bad : {"<a><b></a></b>",
                                "<a>x & y</a>",
                                "<a x=\"1>",
                                "<a x=1/>",
                                "<a x=\"1\" x=\"2\"/>",
                                "<a x=\"<\"/>",
                                "<a/><b/>",
                                "text<a/>",
                                "<a>\x01</a>",
                                "<a>\xff</a>",
                                "<a>\xc0\x80</a>",
                                "<a>\xef\xbf\xbe</a>",
                                "<a>&#1;</a>",
                                "<a>&nbsp;</a>",
                                "<a>]]></a>",
                                "<a><!-- x -- y --></a>",
                                "<a>",
                                "",
                                "<a/><?xml version=\"1.0\"?>",
                                "<a x=\"1\"y=\"2\"/>",
                                "<1a/>"})
    EXPECT_FALSE(well_formed_xml(bad, why)) << bad;
  EXPECT_TRUE(
      well_formed_xml("<?xml version=\"1.0\"?>\n<!-- c --><a x='1' y=\"&#x41;&lt;\">t&amp;<b/>"
                      "<![CDATA[<raw>]]>é</a>\n",
                      why))
      << why;
}

TEST(Reports, JsonParsesAndNullsNonNumbers) {
  const std::string path = testing::TempDir() + "report.json";
  write_json(sample(), path);
  json j = json::parse(read(path));
  json& lab = j["labs"][0];
  EXPECT_EQ(j["complete"], true);
  EXPECT_EQ(j["passed"], false);
  EXPECT_EQ(j["max_score"], 4.0);
  EXPECT_EQ(lab["isolation"], "bubblewrap");
  EXPECT_EQ(lab["status"], "graded");
  EXPECT_EQ(lab["max_score"], 4.0);
  EXPECT_EQ(lab["source"], "/tmp/a \"quoted\" path.cu");
  EXPECT_TRUE(lab["checks"][1]["value"].is_null());  // "nan" is not a JSON number
  EXPECT_EQ(lab["checks"][0]["value"], 0.1);
  EXPECT_EQ(lab["checks"][1]["message"], "line1\n<tag> & \"q\"\ttab");  // \x01 dropped
}

TEST(Reports, JsonHasEachCheckOnALineOfItsOwn) {
  Report r = sample();
  const std::string text = json_report(r);
  std::istringstream in(text);
  int check_lines = 0;
  for (std::string line; std::getline(in, line);)
    if (line.rfind("       {\"name\": ", 0) == 0) ++check_lines;
  EXPECT_EQ(check_lines, 2) << text;
}

TEST(Reports, AJsonReportReadsBackAsTheSameReport) {
  Report r = sample();
  r.labs[0].info["device"] = "NVIDIA H200";
  r.labs[0].metrics.push_back({"performance.bw", "row_sum<<<64, 256>>>", "row_sum.cu:14", "global", "load", "4096",
                               "32", "4", "0.125", "65536"});
  r.labs[0].seconds["run"] = 3.5;
  const std::string text = json_report(r);
  const Report back = report_from_json(text);
  EXPECT_EQ(json_report(back), text);  // every field the JSON holds survives the trip
  EXPECT_THROW(report_from_json("{not json"), std::exception);
}

TEST(Reports, ThePageShowsEachMeasuredRatioAgainstItsThreshold) {
  Report r = sample();
  r.backend = "cuda";
  LabResult& l = r.labs[0];
  l.info["device"] = "NVIDIA H200";
  l.info["sm_clock_mhz"] = "1980";
  l.checks.push_back({"performance.bandwidth_vs_copy", "performance", true, "1.09548", "0.6", "of copy", "", 3, 3});
  const std::string page = html_report(r);
  // one bar per performance check with a number and a threshold ("nan" has none)
  std::size_t bars = 0;
  for (std::size_t at = page.find("<td class=\"bar\">"); at != std::string::npos; at = page.find("<td class=\"bar\">", at + 1))
    ++bars;
  EXPECT_EQ(bars, 1u) << page;
  EXPECT_NE(page.find("bandwidth_vs_copy</td>"), std::string::npos);
  EXPECT_NE(page.find("1.09548 of copy (threshold 0.6)"), std::string::npos) << page;
  // the bar's length and the threshold's mark, on a scale of 1.15 x the larger of the two
  EXPECT_NE(page.find("width:87.0%"), std::string::npos) << page;   // 1.09548 / (1.15 * 1.09548)
  EXPECT_NE(page.find("left:47.6%"), std::string::npos) << page;    // 0.6 / (1.15 * 1.09548)
  EXPECT_NE(page.find("<th>device</th><td>NVIDIA H200</td>"), std::string::npos);
  EXPECT_NE(page.find("<th>SM clock, MHz</th><td>1980</td>"), std::string::npos);
}

TEST(Reports, HostileBytesGiveValidJsonXmlAndConsole) {
  const Report r = hostile();
  json j;
  ASSERT_NO_THROW(j = json::parse(json_report(r)));
  EXPECT_NO_THROW((void)j.dump()) << "strict serialisation re-checks every string's UTF-8";
  const std::string message = j["labs"][0]["checks"][2]["message"];
  EXPECT_EQ(message.find('\x1b'), std::string::npos);
  EXPECT_EQ(message.find('\0'), std::string::npos);
  EXPECT_NE(message.find("\xef\xbf\xbd"), std::string::npos) << "invalid bytes show as U+FFFD";
  EXPECT_EQ(j["labs"][0]["metrics"].size(), 1u);

  const std::string x = junit_report(r);
  std::string why;
  EXPECT_TRUE(well_formed_xml(x, why)) << why << "\n" << x;

  testing::internal::CaptureStdout();
  print_table(r, false);
  const std::string table = testing::internal::GetCapturedStdout();
  EXPECT_TRUE(valid_utf8(table));
  for (char bad : {'\x1b', '\r', '\0', '\x7f'}) EXPECT_EQ(table.find(bad), std::string::npos) << int(bad);
  EXPECT_EQ(table.find("\xe2\x80\xae"), std::string::npos);
  // The fake row is indented under its message: the only "  pass" rows are the real one.
  std::istringstream lines(table);
  int pass_rows = 0;
  for (std::string line; std::getline(lines, line);) pass_rows += line.rfind("  pass", 0) == 0;
  EXPECT_EQ(pass_rows, 1) << table;

  const std::string summary = github_summary(r);
  EXPECT_TRUE(valid_utf8(summary));
  std::istringstream rows(summary);
  for (std::string row; std::getline(rows, row);) {
    if (row.rfind("| ", 0) != 0) continue;
    int bars = 0;
    for (std::size_t k = 0; k < row.size(); ++k) bars += row[k] == '|' && (k == 0 || row[k - 1] != '\\');
    EXPECT_EQ(bars, 6) << row;  // five cells, whatever the names held
  }
}

TEST(Reports, TheIncompleteReportSaysSo) {
  Report r = sample();
  r.complete = false;
  LabResult planned;
  planned.lab = "06-sgemm";
  planned.impl = "student";
  planned.graded = false;
  r.labs.push_back(planned);
  json j = json::parse(json_report(r));
  EXPECT_EQ(j["complete"], false);
  EXPECT_EQ(j["passed"], false);
  EXPECT_EQ(j["labs"][0]["status"], "graded");
  EXPECT_EQ(j["labs"][1]["status"], "not graded");
  EXPECT_EQ(j["labs"][1]["passed"], false);
  EXPECT_TRUE(j["labs"][1]["checks"].empty());

  r.labs.erase(r.labs.begin());  // before grading: nothing graded yet
  const std::string x = junit_report(r);
  std::string why;
  EXPECT_TRUE(well_formed_xml(x, why)) << why << "\n" << x;
  EXPECT_NE(x.find("<testsuites name=\"gpulab\" tests=\"1\" failures=\"1\">"), std::string::npos) << x;
  EXPECT_NE(x.find("name=\"grading incomplete\""), std::string::npos) << x;
  EXPECT_NE(x.find("<failure"), std::string::npos) << x;
}

TEST(ReportFiles, AFifoIsRefusedWithoutHanging) {
  const fs::path dir = scratch("fifo");
  const std::string fifo = (dir / "r.json").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  without_hanging(fifo, [&] {
    try {
      write_json(sample(), fifo);
      ADD_FAILURE() << "no error";
    } catch (const ReportError& e) {
      EXPECT_NE(std::string(e.what()).find("FIFO"), std::string::npos) << e.what();
    }
  });
  without_hanging(fifo, [&] { EXPECT_THROW(append_github_summary(sample(), fifo), ReportError); });
  EXPECT_TRUE(fs::is_fifo(fs::symlink_status(fifo)));
  fs::remove_all(dir);
}

TEST(ReportFiles, SymbolicLinksAndDirectoriesAreRefused) {
  const fs::path dir = scratch("links");
  std::ofstream(dir / "victim") << "old";
  fs::create_symlink(dir / "victim", dir / "link.json");
  fs::create_symlink(dir / "nowhere", dir / "dangling.json");
  fs::create_directory(dir / "folder.json");
  for (const char* name : {"link.json", "dangling.json", "folder.json"}) {
    EXPECT_THROW(write_json(sample(), (dir / name).string()), ReportError) << name;
    EXPECT_THROW(write_junit(sample(), (dir / name).string()), ReportError) << name;
    EXPECT_THROW(append_github_summary(sample(), (dir / name).string()), ReportError) << name;
  }
  // A device and a socket: never opened either.
  EXPECT_THROW(write_json(sample(), "/dev/null"), ReportError);
  EXPECT_THROW(append_github_summary(sample(), "/dev/null"), ReportError);
  const int sock = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string socket_path = (dir / "s.json").string();
  if (sock >= 0 && socket_path.size() < sizeof addr.sun_path) {
    socket_path.copy(addr.sun_path, socket_path.size());
    ASSERT_EQ(::bind(sock, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    EXPECT_THROW(write_json(sample(), socket_path), ReportError);
    EXPECT_TRUE(fs::is_socket(fs::symlink_status(socket_path)));
  }
  if (sock >= 0) ::close(sock);
  EXPECT_EQ(read((dir / "victim").string()), "old");
  EXPECT_FALSE(fs::exists(dir / "nowhere"));
  EXPECT_TRUE(fs::is_symlink(dir / "link.json"));
  fs::remove_all(dir);
}

TEST(ReportFiles, AMissingOrUnwritableDirectoryIsAnError) {
  const fs::path dir = scratch("missing");
  try {
    write_json(sample(), (dir / "no-such-dir" / "r.json").string());
    ADD_FAILURE() << "no error";
  } catch (const ReportError& e) {
    EXPECT_NE(std::string(e.what()).find("No such file or directory"), std::string::npos) << e.what();
  }
  if (::geteuid() != 0) {  // root writes anywhere
    fs::create_directory(dir / "read-only");
    fs::permissions(dir / "read-only", fs::perms::owner_read | fs::perms::owner_exec);
    EXPECT_THROW(write_json(sample(), (dir / "read-only" / "r.json").string()), ReportError);
    fs::permissions(dir / "read-only", fs::perms::owner_all);
  }
  fs::remove_all(dir);
}

TEST(ReportFiles, AReaderSeesTheOldReportOrTheNewOneNeverAPart) {
  const fs::path dir = scratch("atomic");
  const std::string path = (dir / "r.json").string();
  Report r = sample();
  for (int i = 0; i < 400; ++i)  // about 2 MB: many write() calls, were it written in place
    r.labs[0].checks.push_back(
        {"correctness.c" + std::to_string(i), "correctness", false, "1", "0", "", std::string(5000, 'm'), 0, 1});
  r.seed = "0";
  write_json(r, path);
  std::atomic<bool> writing{true};
  auto reader = std::async(std::launch::async, [&] {
    int reads = 0, bad = 0;
    while (writing || reads < 5) {
      ++reads;
      try {
        json j = json::parse(read(path));
        bad += j["labs"][0]["checks"].size() != 402;
      } catch (const json::exception&) {
        ++bad;
      }
    }
    return std::make_pair(reads, bad);
  });
  for (int i = 1; i <= 10; ++i) {
    r.seed = std::to_string(i);
    write_json(r, path);
  }
  writing = false;
  const auto [reads, bad] = reader.get();
  EXPECT_EQ(bad, 0) << "of " << reads << " reads";
  EXPECT_EQ(json::parse(read(path))["seed"], "10");
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(dir)) left.push_back(e.path().filename().string());
  EXPECT_EQ(left, std::vector<std::string>{"r.json"}) << "a temporary file was left behind";
  fs::remove_all(dir);
}

TEST(ReportFiles, TheSummaryIsAppended) {
  const fs::path dir = scratch("summary");
  const std::string path = (dir / "summary.md").string();
  append_github_summary(sample(), path);
  append_github_summary(sample(), path);
  const std::string text = read(path);
  EXPECT_NE(text.find("## gpulab grade"), text.rfind("## gpulab grade"));
  fs::remove_all(dir);
}
