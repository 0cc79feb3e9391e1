// gpulab-cuda2emu: translates the `<<<>>>` launches of a CUDA source for the emulator back-end.
//
//   gpulab-cuda2emu INPUT.cu -o OUTPUT.cu [--name NAME]
//
// NAME (default: INPUT as given) is the file the output's #line directive names, so that the
// compiler's diagnostics and the emulator's findings point at the student's file. Exit status 1,
// with "file:line: message" on stderr, when a launch cannot be translated.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "translate.hpp"

int main(int argc, char** argv) {
  std::string input, output, name;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-o" && i + 1 < argc) output = argv[++i];
    else if (a == "--name" && i + 1 < argc) name = argv[++i];
    else if (input.empty() && !a.empty() && a[0] != '-') input = a;
    else {
      std::cerr << "usage: gpulab-cuda2emu INPUT.cu -o OUTPUT.cu [--name NAME]\n";
      return 2;
    }
  }
  if (input.empty() || output.empty()) {
    std::cerr << "usage: gpulab-cuda2emu INPUT.cu -o OUTPUT.cu [--name NAME]\n";
    return 2;
  }
  std::ifstream in(input, std::ios::binary);
  if (!in) {
    std::cerr << "gpulab-cuda2emu: cannot read " << input << "\n";
    return 2;
  }
  std::ostringstream text;
  text << in.rdbuf();
  const auto t = gpulab::cuda2emu::translate(name.empty() ? input : name, text.str());
  if (!t.errors.empty()) {
    for (const auto& e : t.errors) std::cerr << e << " (gpulab-cuda2emu: <<<>>> launch)\n";
    return 1;
  }
  std::ofstream out(output, std::ios::binary | std::ios::trunc);
  out << t.text;
  out.close();
  if (!out) {
    std::cerr << "gpulab-cuda2emu: cannot write " << output << "\n";
    return 2;
  }
  return 0;
}
