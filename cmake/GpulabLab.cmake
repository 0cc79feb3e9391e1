# gpulab_add_lab(): the targets of one lab.
#
#   gpulab_add_lab(LAB 01-coalescing SOURCES row_sum.cu FUNCTIONS row_sum CHECKS checks.cpp
#                  RUBRIC rubric.ini)
#
# builds the lab's checks once (an object library) and links them with three implementations
# of the lab's contract:
#   lab-<LAB>-student     labs/<LAB>/<SOURCES>          the file the student edits (not built by
#                         default: a half-done edit must not break the build or the self-tests)
#   lab-<LAB>-stub        grader/tests/submissions/<LAB>/stub/<SOURCES>, the stub as shipped
#                         (labs/<LAB>/ when there is no copy): what the self-tests build
#   lab-<LAB>-solution    solutions/<LAB>/<SOURCES>     the reference implementation
#   lab-<LAB>-submission  <build>/submissions/<LAB>/..., a placeholder whose compile and link
#                         commands the grader uses for each hand-in it stages elsewhere (not built)
# and records the lab in <build>/gpulab-labs.tsv, which the grader reads.
include_guard(GLOBAL)

# Written as a draft while the labs are configured, then renamed over the manifest when the top
# directory is done (an atomic replace): a grader reading the manifest while the build tree is
# configured again (a playground build run alongside) sees the old list or the new, never an
# empty or half-written one.
set(GPULAB_LAB_MANIFEST "${CMAKE_BINARY_DIR}/gpulab-labs.tsv.draft")
file(WRITE "${GPULAB_LAB_MANIFEST}" "")
function(_gpulab_publish_lab_manifest)
  file(RENAME "${CMAKE_BINARY_DIR}/gpulab-labs.tsv.draft" "${CMAKE_BINARY_DIR}/gpulab-labs.tsv")
endfunction()
cmake_language(DEFER DIRECTORY "${CMAKE_SOURCE_DIR}" CALL _gpulab_publish_lab_manifest)

function(gpulab_add_lab)
  cmake_parse_arguments(L "" "LAB;RUBRIC" "SOURCES;CHECKS;LIBRARIES;FUNCTIONS" ${ARGN})
  set(lab_dir "${PROJECT_SOURCE_DIR}/labs/${L_LAB}")
  set(solution_dir "${PROJECT_SOURCE_DIR}/solutions/${L_LAB}")
  set(submission_dir "${CMAKE_BINARY_DIR}/submissions/${L_LAB}")
  set(checks lab-${L_LAB}-checks)

  add_library(${checks} OBJECT ${L_CHECKS})
  target_link_libraries(${checks} PUBLIC gpulab_harness ${L_LIBRARIES})
  target_include_directories(${checks} PUBLIC "${lab_dir}")

  set(stub_dir "${PROJECT_SOURCE_DIR}/grader/tests/submissions/${L_LAB}/stub")
  if(NOT EXISTS "${stub_dir}")
    set(stub_dir "${lab_dir}")
  endif()
  foreach(impl student stub solution submission)
    if(impl STREQUAL "student")
      set(dir "${lab_dir}")
    elseif(impl STREQUAL "stub")
      set(dir "${stub_dir}")
    elseif(impl STREQUAL "solution")
      set(dir "${solution_dir}")
    else()
      set(dir "${submission_dir}")
    endif()
    set(sources "")
    foreach(s IN LISTS L_SOURCES)
      if(impl STREQUAL "submission")
        # The slot only lends its compile and link commands to the hand-ins the grader stages
        # elsewhere. A placeholder without `<<<`: on emu a file with a launch is compiled from its
        # translation and compile_commands.json would have no command for the slot itself.
        file(CONFIGURE OUTPUT "${dir}/${s}" CONTENT
             "// Placeholder of the grader's submission slot (cmake/GpulabLab.cmake).\n#include \"gpulab/gpu.hpp\"\n")
      endif()
      list(APPEND sources "${dir}/${s}")
    endforeach()
    set(target lab-${L_LAB}-${impl})
    add_executable(${target} ${sources})
    gpulab_kernel_sources(${target} ${sources})
    # The implementation sees only the contract header and the portability layer: it links the
    # checks, but not the vendor libraries the checks may use for reference timings.
    target_include_directories(${target} PRIVATE "${lab_dir}")
    target_link_libraries(${target} PRIVATE ${checks} gpulab_host)
    if(impl STREQUAL "submission" OR impl STREQUAL "student")
      set_target_properties(${target} PROPERTIES EXCLUDE_FROM_ALL ON)
    endif()
  endforeach()

  string(JOIN "," source_list ${L_SOURCES})
  string(JOIN "," function_list ${L_FUNCTIONS})
  file(APPEND "${GPULAB_LAB_MANIFEST}"
       "${L_LAB}\t${lab_dir}\t${solution_dir}\t${submission_dir}\t${CMAKE_CURRENT_SOURCE_DIR}/${L_RUBRIC}\t${source_list}\t${function_list}\n")
  # The grader runs the solution target as the judge and links hand-ins against the checks: the
  # tests that grade need them built.
  set_property(GLOBAL APPEND PROPERTY GPULAB_LAB_TARGETS lab-${L_LAB}-stub lab-${L_LAB}-solution)
endfunction()
