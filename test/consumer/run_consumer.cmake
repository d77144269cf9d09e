# Builds and runs examples/consumer twice: against an install of this build tree
# (find_package(tilewise CONFIG)) and with add_subdirectory on the source tree.
file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " cmd "${ARGN}")
    message(FATAL_ERROR "failed (${rc}): ${cmd}")
  endif()
endfunction()

run(${CMAKE_COMMAND} --install "${TILEWISE_BINARY_DIR}" --prefix "${prefix}")
foreach(f tilewise/tilewise.cuh tilewise/api.hpp tilewise/thrust.cuh tilewise/tile/reduce.cuh
         tilewise/detail/device/extern_reduce.cuh)
  if(NOT EXISTS "${prefix}/include/${f}")
    message(FATAL_ERROR "install is missing include/${f}")
  endif()
endforeach()
file(GLOB_RECURSE config "${prefix}/*/tilewiseConfig.cmake")
if(NOT config)
  message(FATAL_ERROR "install is missing tilewiseConfig.cmake")
endif()

set(common -G "${GENERATOR}" -DCMAKE_CUDA_ARCHITECTURES=${CUDA_ARCHITECTURES})
foreach(mode installed subdirectory)
  set(build "${WORK_DIR}/build-${mode}")
  if(mode STREQUAL "installed")
    run(${CMAKE_COMMAND} -S "${TILEWISE_SOURCE_DIR}/examples/consumer" -B "${build}" ${common}
        -DCMAKE_PREFIX_PATH=${prefix})
  else()
    run(${CMAKE_COMMAND} -S "${TILEWISE_SOURCE_DIR}/examples/consumer" -B "${build}" ${common}
        -DCONSUMER_TILEWISE_SOURCE_DIR=${TILEWISE_SOURCE_DIR})
  endif()
  run(${CMAKE_COMMAND} --build "${build}")
  run("${build}/consumer_host")
  run("${build}/consumer_cuda")
  message(STATUS "consumer (${mode}): built and ran")
endforeach()
