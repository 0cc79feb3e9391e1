# Compilers and flags for the three back-ends. Kernel sources (*.cu) are compiled
#   emu : as C++ by clang++ against the emulator headers (memory-access tracing on),
#   cuda: as CUDA by nvcc,
#   rocm: as HIP by hipcc (the rocm preset makes hipcc the C++ compiler).
include_guard(GLOBAL)

if(GPULAB_BACKEND STREQUAL "emu")
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(WARNING
      "The emu back-end wants clang++ (its load/store tracing gives the memory-access metrics); "
      "with ${CMAKE_CXX_COMPILER_ID} kernels run but the metrics are not measured. "
      "Use the emu preset, or -DCMAKE_CXX_COMPILER=clang++.")
    set(GPULAB_EMU_METRICS OFF)
  else()
    set(GPULAB_EMU_METRICS ON)
  endif()
  # Boost's own CMake package first (CMake 4 has no FindBoost module), else CMake's module.
  # Without libboost_context the emulator's fibers use ucontext (common/emu/src/fiber_context.hpp).
  option(GPULAB_EMU_UCONTEXT "emulator fibers over ucontext even where libboost_context is installed" OFF)
  find_package(Boost 1.71 QUIET CONFIG COMPONENTS context)
  if(NOT TARGET Boost::context AND CMAKE_VERSION VERSION_LESS 3.30)
    find_package(Boost 1.71 QUIET MODULE COMPONENTS context)
  endif()
  if(NOT TARGET Boost::context)
    message(STATUS "gpulab: libboost_context not found (Debian/Ubuntu: libboost-context-dev); "
                   "the emulator's fibers will use ucontext, which is slower")
  endif()
elseif(GPULAB_BACKEND STREQUAL "cuda")
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES OR CMAKE_CUDA_ARCHITECTURES STREQUAL "")
    # The machine's GPU when there is one, else Hopper (sm_90): configures without a GPU.
    set(_arch 90)
    find_program(_nvsmi nvidia-smi)
    if(_nvsmi)
      execute_process(COMMAND ${_nvsmi} --query-gpu=compute_cap --format=csv,noheader
                      OUTPUT_VARIABLE _cc RESULT_VARIABLE _rc ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
      if(_rc EQUAL 0 AND _cc MATCHES "^([0-9]+)\\.([0-9]+)")
        set(_arch "${CMAKE_MATCH_1}${CMAKE_MATCH_2}")
      endif()
    endif()
    set(CMAKE_CUDA_ARCHITECTURES ${_arch} CACHE STRING "CUDA architectures (default: this machine's GPU, else 90)")
  endif()
  enable_language(CUDA)
  set(CMAKE_CUDA_STANDARD 17)
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  find_package(CUDAToolkit REQUIRED)
  message(STATUS "gpulab: CUDA architectures ${CMAKE_CUDA_ARCHITECTURES}")
elseif(GPULAB_BACKEND STREQUAL "rocm")
  get_filename_component(_cxx "${CMAKE_CXX_COMPILER}" NAME)
  if(NOT _cxx MATCHES "hipcc|amdclang|clang")
    message(FATAL_ERROR "The rocm back-end compiles with hipcc: use the rocm preset "
                        "(-DCMAKE_CXX_COMPILER=hipcc)")
  endif()
  if(NOT DEFINED GPULAB_HIP_ARCHITECTURES)
    set(_archs "")
    find_program(_agent rocm_agent_enumerator)
    if(_agent)
      execute_process(COMMAND ${_agent} OUTPUT_VARIABLE _out ERROR_QUIET RESULT_VARIABLE _rc)
      if(_rc EQUAL 0)
        string(REGEX MATCHALL "gfx[0-9a-f]+" _found "${_out}")
        list(REMOVE_ITEM _found gfx000)
        list(REMOVE_DUPLICATES _found)
        set(_archs ${_found})
      endif()
    endif()
    if(NOT _archs)
      set(_archs gfx90a gfx940)
    endif()
    set(GPULAB_HIP_ARCHITECTURES "${_archs}" CACHE STRING "AMD GPU targets (default: this machine's, else gfx90a;gfx940)")
  endif()
  message(STATUS "gpulab: HIP targets ${GPULAB_HIP_ARCHITECTURES}")
endif()

# The twin pass (common/emu/passes/twin_pass.cpp) for one source of target, where it is built: a
# block loop of each kernel without barriers, warp collectives or calls (all its threads in one
# call, which the compiler may vectorise), run by the emulator in blocks nobody checks; in a file
# with access tracing also an untraced twin of every function. Also for a kernel file compiled as
# plain C++ (`./gpulab run --no-checks`, the emulator's benchmark).
function(gpulab_block_loops target src)
  if(GPULAB_BACKEND STREQUAL "emu" AND GPULAB_TWIN_PASS_FOUND)
    set_property(SOURCE ${src} TARGET_DIRECTORY ${target} APPEND PROPERTY COMPILE_OPTIONS
      "-fpass-plugin=${GPULAB_TWIN_PASS}")
    set_property(SOURCE ${src} TARGET_DIRECTORY ${target} APPEND PROPERTY OBJECT_DEPENDS "${GPULAB_TWIN_PASS}")
    add_dependencies(${target} gpulab_twin_pass)
  endif()
endfunction()

# Marks kernel sources (files that include gpulab/gpu.hpp and define __global__ functions) so
# that each back-end compiles them the right way.
function(gpulab_kernel_sources target)
  foreach(src IN LISTS ARGN)
    if(GPULAB_BACKEND STREQUAL "emu")
      _gpulab_emu_translate_launches(${target} "${src}" src)
      set_source_files_properties(${src} TARGET_DIRECTORY ${target} PROPERTIES LANGUAGE CXX)
      # Large stack frames probe every page, so an overflow of a fiber stack hits its guard page.
      # -O2 whatever the build type (source options come after CMAKE_CXX_FLAGS_<CONFIG>): the
      # emulator's metrics, the instruction counts of the performance model and the vetting of a
      # hand-in's symbols are calibrated on that code; a Debug tree's -O0 would change grades
      # (counts of unoptimised code; header inline functions emitted as the hand-in's own).
      set_property(SOURCE ${src} TARGET_DIRECTORY ${target} APPEND PROPERTY COMPILE_OPTIONS
        -fstack-clash-protection -O2)
      if(GPULAB_EMU_METRICS)
        # Every load and store of the kernel file is reported to the emulator; vectorisation is
        # off so that a lane's access is not merged with its neighbours'.
        set_property(SOURCE ${src} TARGET_DIRECTORY ${target} APPEND PROPERTY COMPILE_OPTIONS
          -fsanitize-coverage=func,trace-loads,trace-stores -fno-vectorize -fno-slp-vectorize
          -gline-tables-only)
        if(GPULAB_DEVICE_PASS_FOUND)
          # What that tracing leaves out (memcpy, atomics, accesses of other sizes, library calls)
          # traced or refused, and attributes that switch it off refused (common/emu/passes
          # device_pass.cpp). First of the plugins: it must see the code before the twin pass.
          set_property(SOURCE ${src} TARGET_DIRECTORY ${target} APPEND PROPERTY COMPILE_OPTIONS
            "-fpass-plugin=${GPULAB_DEVICE_PASS}")
          set_property(SOURCE ${src} TARGET_DIRECTORY ${target} APPEND PROPERTY OBJECT_DEPENDS "${GPULAB_DEVICE_PASS}")
          add_dependencies(${target} gpulab_device_pass)
        endif()
        if(GPULAB_UNSPECULATE_PASS_FOUND)
          # Loads the optimiser speculated are traced only where the source makes them
          # (common/emu/passes/unspeculate_pass.cpp): no race reported for a load no thread made.
          set_property(SOURCE ${src} TARGET_DIRECTORY ${target} APPEND PROPERTY COMPILE_OPTIONS
            "-fpass-plugin=${GPULAB_UNSPECULATE_PASS}")
          set_property(SOURCE ${src} TARGET_DIRECTORY ${target} APPEND PROPERTY OBJECT_DEPENDS "${GPULAB_UNSPECULATE_PASS}")
          add_dependencies(${target} gpulab_unspeculate_pass)
        endif()
      endif()
      if(GPULAB_PLAIN_TWINS)
        # An untraced twin of every function (common/emu/passes/twin_pass.cpp), for a scope that
        # sets GPULAB_PLAIN_TWINS: blocks outside the sample of GPULAB_EMU_CHECKS=sample run it;
        # and block loops of the kernels without barriers, warp collectives or calls.
        gpulab_block_loops(${target} ${src})
      endif()
      if(GPULAB_COUNT_INSTRUCTIONS AND GPULAB_COUNT_PASS_FOUND)
        # Instructions executed, by class (common/emu/passes/count_pass.cpp), with or without the
        # access tracing: for the performance model's programs only (a scope that sets
        # GPULAB_COUNT_INSTRUCTIONS), not the labs. No vectorising: one thread's code stays scalar,
        # as a GPU thread's is, and is counted so.
        set_property(SOURCE ${src} TARGET_DIRECTORY ${target} APPEND PROPERTY COMPILE_OPTIONS
          "-fpass-plugin=${GPULAB_COUNT_PASS}" -fno-vectorize -fno-slp-vectorize)
        set_property(SOURCE ${src} TARGET_DIRECTORY ${target} APPEND PROPERTY OBJECT_DEPENDS "${GPULAB_COUNT_PASS}")
        add_dependencies(${target} gpulab_count_pass)
      endif()
    elseif(GPULAB_BACKEND STREQUAL "cuda")
      set_source_files_properties(${src} TARGET_DIRECTORY ${target} PROPERTIES LANGUAGE CUDA)
      # Line tables only (the code is unchanged): compute-sanitizer's findings then say file:line.
      # --extended-lambda: `[=] __device__ (...) {...}` written in host code and passed to a kernel,
      # as clang (the emulator, hipcc) accepts it; nvcc refuses it without the flag.
      set_property(SOURCE ${src} TARGET_DIRECTORY ${target} APPEND PROPERTY COMPILE_OPTIONS -lineinfo
        --extended-lambda)
    else()
      set_source_files_properties(${src} TARGET_DIRECTORY ${target} PROPERTIES LANGUAGE CXX)
      set_property(SOURCE ${src} TARGET_DIRECTORY ${target} APPEND PROPERTY COMPILE_OPTIONS -x hip)
    endif()
  endforeach()
  if(GPULAB_BACKEND STREQUAL "rocm")
    foreach(a IN LISTS GPULAB_HIP_ARCHITECTURES)
      target_compile_options(${target} PRIVATE --offload-arch=${a})
      target_link_options(${target} PRIVATE --offload-arch=${a})
    endforeach()
  endif()
endfunction()

# On the emu back-end, a kernel file that contains `<<<` is compiled from a translation in the
# build tree, made by gpulab-cuda2emu (common/emu/cuda2emu): its `<<<>>>` launches become
# gpulab::emu::cuda_launch calls, every line keeps its file and number (#line). Files without
# `<<<` are compiled as they are. The test is made when CMake configures, and every kernel file
# is a configure dependency, so a file that gains (or loses) `<<<` is seen at the next build.
# Sets `out_var` to the source the target now compiles. Call it from the target's directory.
function(_gpulab_emu_translate_launches target src out_var)
  get_filename_component(abs "${src}" ABSOLUTE)
  set(${out_var} "${src}" PARENT_SCOPE)
  if(NOT EXISTS "${abs}")
    return()
  endif()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${abs}")
  file(READ "${abs}" text)
  string(FIND "${text}" "<<<" at)
  string(REGEX MATCH "extern[ \t]+__shared__" dynamic_shared "${text}")
  if(at EQUAL -1 AND NOT dynamic_shared)
    return()
  endif()
  file(RELATIVE_PATH rel "${PROJECT_SOURCE_DIR}" "${abs}")
  string(REPLACE "../" "__/" rel "${rel}")
  set(out "${CMAKE_CURRENT_BINARY_DIR}/cuda2emu/${target}/${rel}")
  get_filename_component(name "${abs}" NAME)
  add_custom_command(OUTPUT "${out}"
    COMMAND gpulab-cuda2emu "${abs}" -o "${out}"
    DEPENDS "${abs}" gpulab-cuda2emu
    COMMENT "cuda2emu: translating the <<<>>> launches of ${name}"
    VERBATIM)
  # The target compiles the translation instead of the file; quoted includes still find the
  # file's neighbours.
  get_target_property(sources ${target} SOURCES)
  set(replaced "")
  foreach(s IN LISTS sources)
    get_filename_component(s_abs "${s}" ABSOLUTE)
    if(s STREQUAL src OR s_abs STREQUAL abs)
      list(APPEND replaced "${out}")
    else()
      list(APPEND replaced "${s}")
    endif()
  endforeach()
  set_property(TARGET ${target} PROPERTY SOURCES ${replaced})
  get_filename_component(dir "${abs}" DIRECTORY)
  set_source_files_properties("${out}" PROPERTIES GENERATED TRUE)
  set_property(SOURCE "${out}" APPEND PROPERTY COMPILE_OPTIONS "-iquote${dir}")
  set(${out_var} "${out}" PARENT_SCOPE)
endfunction()

# A standalone CUDA program (its own main()) built from plain CUDA sources, `<<<>>>` and all:
#   gpulab_emu_cuda_executable(vector_add vector_add.cu [more sources...])
# On the emu back-end it links the emulator and prints the emulator's metrics and findings when
# it ends; on cuda and rocm it is an ordinary program of that back-end.
function(gpulab_emu_cuda_executable target)
  add_executable(${target} ${ARGN})
  set(kernels "")
  foreach(s IN LISTS ARGN)
    if(s MATCHES "\\.cu$")
      list(APPEND kernels "${s}")
    endif()
  endforeach()
  gpulab_kernel_sources(${target} ${kernels})
  target_link_libraries(${target} PRIVATE gpulab_host)
  if(GPULAB_BACKEND STREQUAL "emu")
    target_link_libraries(${target} PRIVATE gpulab_emu_report)
  endif()
endfunction()
