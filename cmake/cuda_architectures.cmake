# The CUDA architectures the GPU engine is built for when the user gives
# none (docs/engine.md, "Which GPUs the engine is built for"): machine code
# (SASS) for every compute capability of a GPU in the catalog
# (data/gpu_compute_capability.csv) that this nvcc can compile for, plus
# PTX of the newest, which the driver compiles for GPUs newer than the
# toolkit. What the catalog needs and the toolkit cannot build (CUDA 13:
# sm_70 and older) is reported, not an error.
#
# cf_cuda_catalog_architectures(NVCC CSV OUT_ARCHS OUT_SKIPPED)
#   OUT_ARCHS    e.g. "75-real;80-real;86-real;89-real;90-real;100-real;103-real;120"
#                (the last entry without -real: SASS and PTX)
#   OUT_SKIPPED  e.g. "sm_70 (V100, V100-32GB, ...);sm_61 (P4)"
function(cf_cuda_catalog_architectures nvcc csv out_archs out_skipped)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${csv})
  execute_process(COMMAND ${nvcc} --list-gpu-arch OUTPUT_VARIABLE listed RESULT_VARIABLE rc ERROR_QUIET)
  if(NOT rc EQUAL 0)
    message(WARNING "${nvcc} --list-gpu-arch failed: building the CUDA engine for sm_75 only "
                    "(give -DCMAKE_CUDA_ARCHITECTURES=... for others)")
    set(${out_archs} "75" PARENT_SCOPE)
    set(${out_skipped} "" PARENT_SCOPE)
    return()
  endif()
  file(STRINGS ${csv} rows)
  list(REMOVE_AT rows 0) # the header
  set(need "")
  set(skipped_sms "")
  foreach(row IN LISTS rows)
    if(NOT row MATCHES "^([^,]+),([0-9]+)\\.([0-9]),")
      continue() # no compute capability: not a CUDA device (AMD)
    endif()
    set(model ${CMAKE_MATCH_1})
    math(EXPR sm "${CMAKE_MATCH_2} * 10 + ${CMAKE_MATCH_3}")
    if(listed MATCHES "compute_${sm}([^0-9]|$)")
      list(APPEND need ${sm})
    else()
      list(APPEND skipped_sms ${sm})
      list(APPEND skipped_${sm} ${model})
    endif()
  endforeach()
  list(REMOVE_DUPLICATES need)
  list(SORT need COMPARE NATURAL)
  list(REMOVE_DUPLICATES skipped_sms)
  list(SORT skipped_sms COMPARE NATURAL ORDER DESCENDING)
  set(archs "")
  list(LENGTH need n)
  math(EXPR last "${n} - 1")
  foreach(i RANGE ${last})
    list(GET need ${i} sm)
    if(i EQUAL last)
      list(APPEND archs "${sm}")
    else()
      list(APPEND archs "${sm}-real")
    endif()
  endforeach()
  set(skipped "")
  foreach(sm IN LISTS skipped_sms)
    string(REPLACE ";" ", " models "${skipped_${sm}}")
    list(APPEND skipped "sm_${sm} (${models})")
  endforeach()
  set(${out_archs} "${archs}" PARENT_SCOPE)
  set(${out_skipped} "${skipped}" PARENT_SCOPE)
endfunction()
