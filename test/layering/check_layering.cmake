cmake_minimum_required(VERSION 3.25)
# Fails when a header of include/tilewise includes a header of a higher floor.
# Floors, lowest first: ground (detail/*.cuh), tile, block, grid | device (siblings), thrust | dist
# (siblings), umbrella.
# A public header may include public headers and internals of its own floor and of lower floors;
# an internal header (detail/...) may include internals of its own floor and lower floors, and
# public headers of strictly lower floors only (never the public shell over itself).
# Usage: cmake -DINCLUDE_DIR=<repo>/include -P check_layering.cmake
if(NOT INCLUDE_DIR)
  message(FATAL_ERROR "pass -DINCLUDE_DIR=<repo>/include")
endif()

# floor_of(<path relative to include/> <out-floor> <out-is-detail>)
function(floor_of path out_floor out_detail)
  set(detail FALSE)
  if(path MATCHES "^tilewise/detail/")
    set(detail TRUE)
    string(REGEX REPLACE "^tilewise/detail/" "" rest "${path}")
    if(rest MATCHES "^(block|grid|device|thrust|dist)/")
      set(floor ${CMAKE_MATCH_1})
    else()
      set(floor ground)
    endif()
  elseif(path MATCHES "^tilewise/(tile|block|grid|device|thrust|dist)/")
    set(floor ${CMAKE_MATCH_1})
  elseif(path STREQUAL "tilewise/api.hpp")
    set(floor ground)  # plain C++ declarations: includes nothing of tilewise
  else()
    set(floor umbrella)  # tilewise.cuh, thrust.cuh
  endif()
  set(${out_floor} ${floor} PARENT_SCOPE)
  set(${out_detail} ${detail} PARENT_SCOPE)
endfunction()

# The floors a floor may reach, itself included.
set(reach_ground ground)
set(reach_tile ground tile)
set(reach_block ground tile block)
set(reach_grid ground tile block grid)
set(reach_device ground tile block device)
set(reach_thrust ground tile block device thrust)
set(reach_dist ground tile block device dist)
set(reach_umbrella ground tile block grid device thrust dist umbrella)

file(GLOB_RECURSE headers RELATIVE ${INCLUDE_DIR} ${INCLUDE_DIR}/tilewise/*.cuh ${INCLUDE_DIR}/tilewise/*.hpp)
set(violations 0)
foreach(h IN LISTS headers)
  floor_of(${h} floor detail)
  file(STRINGS ${INCLUDE_DIR}/${h} includes REGEX "^[ \t]*#[ \t]*include[ \t]*<tilewise/")
  foreach(line IN LISTS includes)
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*<(tilewise/[^>]+)>.*$" "\\1" target "${line}")
    floor_of(${target} tfloor tdetail)
    set(ok FALSE)
    if(tfloor IN_LIST reach_${floor})
      set(ok TRUE)
      if(detail AND NOT tdetail AND tfloor STREQUAL floor)
        set(ok FALSE)  # an internal header never includes the public shell of its own floor
      endif()
    endif()
    if(NOT ok)
      message(SEND_ERROR "${h} (floor ${floor}) includes ${target} (floor ${tfloor}): an arrow that runs up")
      math(EXPR violations "${violations} + 1")
    endif()
  endforeach()
endforeach()
list(LENGTH headers n)
if(violations GREATER 0)
  message(FATAL_ERROR "${violations} include(s) of a higher floor in ${n} headers")
endif()
message(STATUS "layering: ${n} headers, every include stays on its floor or below")
