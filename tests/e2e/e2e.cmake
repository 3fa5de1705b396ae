# End-to-end tests (label e2e): one ctest test per tests/e2e/test_*.py module, each starting its
# own `oxydllm start` server(s) and driving them with the openai SDK from the venv that
# scripts/e2e_venv.sh makes (build/e2e-venv by default; OXYD_E2E_VENV overrides). Without that
# venv the tests fail with a message; OXYD_E2E_SKIP=1 makes them skip (exit 77). The real models
# that scripts/test_models.sh fetches are found through OXYD_TEST_MODELS_DIR (real_models.py).
if(NOT TARGET oxydllm)
  return()
endif()
if(DEFINED ENV{OXYD_E2E_VENV})
  set(OXYD_E2E_VENV "$ENV{OXYD_E2E_VENV}")
else()
  set(OXYD_E2E_VENV "${CMAKE_SOURCE_DIR}/build/e2e-venv")
endif()
file(GLOB oxyd_e2e_modules CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/test_*.py)
foreach(module ${oxyd_e2e_modules})
  get_filename_component(name ${module} NAME_WE)
  add_test(NAME e2e_${name}
    COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/run_e2e.sh ${OXYD_E2E_VENV} $<TARGET_FILE:oxydllm> ${name}.py)
  set_tests_properties(e2e_${name} PROPERTIES LABELS e2e TIMEOUT 600 SKIP_RETURN_CODE 77
    ENVIRONMENT "OXYD_TEST_MODELS_DIR=${CMAKE_BINARY_DIR}/test-models")
endforeach()
