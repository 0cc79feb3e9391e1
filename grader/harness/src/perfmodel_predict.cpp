// gpulab-perfmodel-predict: the grader's performance model (gpulab/grade/perfmodel.hpp) on the
// tables docs/results/perfmodel/model.py reads, one line per step: step, predicted seconds, what bounds
// it, blocks per SM. docs/results/perfmodel/cpp_matches.py sets it against model.py's predict_v1.
//
//   gpulab-perfmodel-predict COUNTS.tsv RESOURCES.tsv [N [GPU]]   (GPU: H200, RTX4090, MI300X)
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "gpulab/grade/perfmodel.hpp"

namespace {

using Row = std::map<std::string, std::string>;

std::vector<Row> read_tsv(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::vector<std::string> header;
  std::vector<Row> rows;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> fields;
    std::istringstream f(line);
    for (std::string x; std::getline(f, x, '\t');) fields.push_back(x);
    if (header.empty()) {
      header = fields;
      continue;
    }
    Row r;
    for (std::size_t i = 0; i < header.size() && i < fields.size(); ++i) r[header[i]] = fields[i];
    rows.push_back(r);
  }
  return rows;
}

}  // namespace

int main(int argc, char** argv) {
  namespace pm = gpulab::grade::perfmodel;
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s COUNTS.tsv RESOURCES.tsv [N [GPU]]\n", argv[0]);
    return 2;
  }
  try {
    const std::vector<Row> counts = read_tsv(argv[1]);
    std::map<std::string, Row> resources;
    for (const Row& r : read_tsv(argv[2])) resources[r.at("step")] = r;
    const int big_n = argc > 3 ? std::stoi(argv[3]) : 4096;
    const std::string name = argc > 4 ? argv[4] : "H200";
    const pm::Gpu* found = pm::gpu(name);
    if (!found) throw std::runtime_error("no parameters for the GPU " + name);
    const pm::Gpu& gpu = *found;
    for (const Row& r : counts) {
      pm::Counts c;
      for (const auto& [k, v] : r)
        if (k != "step" && k != "n") c[k] = std::stod(v);
      const Row& res = resources.at(r.at("step"));
      const pm::Prediction p = pm::predict_sgemm(c, std::stoi(res.at("registers")), std::stoll(res.at("shared_bytes")),
                                                 gpu, std::stoi(r.at("n")), big_n);
      std::printf("%s\t%.9e\t%s\t%d\n", r.at("step").c_str(), p.seconds, p.bound.c_str(), p.blocks_per_sm);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", argv[0], e.what());
    return 1;
  }
  return 0;
}
