# XGrammar (Apache-2.0), the grammar engine behind src/grammar/: its C++ core from the pinned PyPI
# source distribution, fetched, checked (sha256) and built by scripts/xgrammar.sh into
# build/_deps/xgrammar at configure time, as a project of its own so that its -Werror/-flto never
# reach our flags. The built archive stays in the build tree (a second configure reuses it) and the
# tarball in ~/.cache/oxydllm. Defines the imported target oxyd_xgrammar.
set(_xg_dir ${CMAKE_BINARY_DIR}/_deps/xgrammar)
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env CXX=${CMAKE_CXX_COMPILER} bash ${CMAKE_SOURCE_DIR}/scripts/xgrammar.sh ${CMAKE_BINARY_DIR}
  RESULT_VARIABLE _xg_rc)
if(NOT _xg_rc EQUAL 0 OR NOT EXISTS ${_xg_dir}/build/libxgrammar.a)
  message(FATAL_ERROR "scripts/xgrammar.sh failed (${_xg_rc}): XGrammar could not be fetched or built")
endif()
add_library(oxyd_xgrammar STATIC IMPORTED GLOBAL)
set_target_properties(oxyd_xgrammar PROPERTIES IMPORTED_LOCATION ${_xg_dir}/build/libxgrammar.a)
# SYSTEM: its headers' warnings are not ours.
target_include_directories(oxyd_xgrammar SYSTEM INTERFACE ${_xg_dir}/src/include ${_xg_dir}/src/3rdparty/dlpack/include)
target_compile_definitions(oxyd_xgrammar INTERFACE XGRAMMAR_ENABLE_CPPTRACE=0 XGRAMMAR_ENABLE_INTERNAL_CHECK=0)
set_property(DIRECTORY ${CMAKE_SOURCE_DIR} APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/scripts/xgrammar.sh)
