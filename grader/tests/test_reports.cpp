// Report writers: the JSON and JUnit files must be well formed whatever the messages contain.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "reports.hpp"

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

/// A small XML well-formedness check: tags nest, attributes are quoted, no raw '<' or '&' in text.
bool well_formed_xml(const std::string& x, std::string& why) {
  std::vector<std::string> stack;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (x[i] == '&') {
      const auto semi = x.find(';', i);
      const std::string ent = x.substr(i, semi == std::string::npos ? 0 : semi - i + 1);
      if (ent != "&lt;" && ent != "&gt;" && ent != "&amp;" && ent != "&quot;" && ent != "&apos;") {
        why = "bad entity at " + std::to_string(i);
        return false;
      }
      continue;
    }
    if (x[i] != '<') {
      if (static_cast<unsigned char>(x[i]) < 0x20 && x[i] != '\n' && x[i] != '\t' && x[i] != '\r') {
        why = "control character at " + std::to_string(i);
        return false;
      }
      continue;
    }
    const auto end = x.find('>', i);
    if (end == std::string::npos) {
      why = "unterminated tag";
      return false;
    }
    std::string tag = x.substr(i + 1, end - i - 1);
    i = end;
    if (tag[0] == '?') continue;
    if (std::count(tag.begin(), tag.end(), '"') % 2) {
      why = "unbalanced quotes in <" + tag + ">";
      return false;
    }
    if (tag[0] == '/') {
      if (stack.empty() || stack.back() != tag.substr(1)) {
        why = "mismatched </" + tag.substr(1) + ">";
        return false;
      }
      stack.pop_back();
    } else if (tag.back() != '/') {
      stack.push_back(tag.substr(0, tag.find_first_of(" \t\n")));
    }
  }
  if (!stack.empty()) why = "unclosed <" + stack.back() + ">";
  return stack.empty();
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
