// Report writers: the JSON and JUnit files must be well formed whatever the messages contain.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "reports.hpp"
#include "xml_check.hpp"

using namespace gpulab::grade;

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
  l.checks.push_back({"correctness.tiny", "correctness", true, "0.1", "1", "error/tolerance", "", 1, 1});
  l.checks.push_back({"performance.bw", "performance", false, "nan", "0.6", "", "line1\n<tag> & \"q\"\ttab\x01", 0, 3});
  l.score = 1;
  l.max_score = 4;
  r.labs.push_back(l);
  return r;
}

std::string read(const std::string& p) {
  std::ifstream in(p);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

}  // namespace

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
  EXPECT_FALSE(well_formed_xml("<a><b></a></b>", why));
  EXPECT_FALSE(well_formed_xml("<a>x & y</a>", why));
  EXPECT_FALSE(well_formed_xml("<a x=\"1>", why));
}

TEST(Reports, JsonEscapesStringsAndNullsNonNumbers) {
  const std::string path = testing::TempDir() + "report.json";
  write_json(sample(), path);
  const std::string j = read(path);
  EXPECT_NE(j.find("\"value\": null"), std::string::npos) << j;       // "nan" is not a JSON number
  EXPECT_NE(j.find("\"value\": 0.1"), std::string::npos) << j;
  EXPECT_NE(j.find("line1\\n<tag> & \\\"q\\\"\\ttab\\u0001"), std::string::npos) << j;
  EXPECT_NE(j.find("\\\"quoted\\\""), std::string::npos) << j;
  EXPECT_NE(j.find("\"passed\": false"), std::string::npos);
}
