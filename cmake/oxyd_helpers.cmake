# Helpers shared by every layer's CMakeLists.
#
# oxyd_add_layer(NAME DIR DEPS...): a static library `oxyd_<NAME>` from every .cc under DIR
# (not recursing into sub-layers that have their own CMakeLists). Files ending in _avx2.cc and
# _avx512.cc are compiled with those ISA flags only; everything else stays portable and the
# right kernel is chosen at run time from CPUID.
set(OXYD_AVX2_FLAGS -mavx2 -mfma -mf16c -mbmi2)
set(OXYD_AVX512_FLAGS -mavx2 -mfma -mf16c -mbmi2 -mavx512f -mavx512bw -mavx512vl -mavx512dq
    -mavx512vnni -mavx512bf16
    # GCC 12's own AVX-512 headers trip (-Wmaybe-)uninitialized on their _mm512_undefined_*
    # placeholders inside inlined intrinsics: hundreds of false positives per kernel file.
    -Wno-uninitialized -Wno-maybe-uninitialized)

include(${CMAKE_CURRENT_LIST_DIR}/check_layers.cmake)  # oxyd_register_layer, oxyd_check_layers

function(oxyd_add_layer name dir)
  oxyd_register_layer(${name} ${dir} ${ARGN})  # for the layering check (cmake/check_layers.cmake)
  file(GLOB srcs CONFIGURE_DEPENDS ${dir}/*.cc)
  foreach(sub IN LISTS OXYD_LAYER_SUBDIRS_${name})
    file(GLOB_RECURSE more CONFIGURE_DEPENDS ${dir}/${sub}/*.cc)
    list(APPEND srcs ${more})
  endforeach()
  if(srcs)
    add_library(oxyd_${name} STATIC ${srcs})
    target_include_directories(oxyd_${name} PUBLIC ${CMAKE_SOURCE_DIR}/src)
    target_link_libraries(oxyd_${name} PUBLIC ${ARGN})
    foreach(src IN LISTS srcs)
      if(src MATCHES "_avx512\\.cc$")
        set_source_files_properties(${src} PROPERTIES COMPILE_OPTIONS "${OXYD_AVX512_FLAGS}")
      elseif(src MATCHES "_avx2\\.cc$")
        set_source_files_properties(${src} PROPERTIES COMPILE_OPTIONS "${OXYD_AVX2_FLAGS}")
      endif()
    endforeach()
  else()
    add_library(oxyd_${name} INTERFACE)
    target_include_directories(oxyd_${name} INTERFACE ${CMAKE_SOURCE_DIR}/src)
    target_link_libraries(oxyd_${name} INTERFACE ${ARGN})
  endif()
endfunction()

# oxyd_add_test_dir(DIR LABEL LIBS...): one GoogleTest executable `test_<DIR with _>` from every
# .cc in tests/DIR, each test registered with ctest under LABEL. OXYD_SOURCE_DIR points tests at
# committed fixtures; OXYD_TEST_DATA_DIR at tests/data (fixtures, real tokenizers and templates);
# OXYD_TEST_MODELS_DIR at the real models scripts/test_models.sh fetches (tests/real_models.h).
find_package(GTest REQUIRED)
include(GoogleTest)
function(oxyd_add_test_dir dir label)
  file(GLOB srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/${dir}/*.cc)
  if(NOT srcs)
    return()
  endif()
  string(REPLACE "/" "_" tname "test_${dir}")
  add_executable(${tname} ${srcs})
  target_link_libraries(${tname} PRIVATE ${ARGN} GTest::gtest GTest::gtest_main GTest::gmock)
  target_compile_definitions(${tname} PRIVATE
    OXYD_SOURCE_DIR="${CMAKE_SOURCE_DIR}" OXYD_TEST_DATA_DIR="${CMAKE_SOURCE_DIR}/tests/data"
    OXYD_TEST_MODELS_DIR="${CMAKE_BINARY_DIR}/test-models")
  target_include_directories(${tname} PRIVATE ${CMAKE_SOURCE_DIR}/tests)
  set_target_properties(${tname} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
  gtest_discover_tests(${tname} PROPERTIES LABELS ${label} DISCOVERY_TIMEOUT 60)
endfunction()
