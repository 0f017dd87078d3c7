# cmake -DBIN=cloudfit -DOUT=docs/cloudfit.1 -P man_page.cmake: the manual
# page as `cloudfit help --man` prints it, written whole or not at all.
get_filename_component(dir "${OUT}" DIRECTORY)
file(MAKE_DIRECTORY "${dir}")
execute_process(COMMAND "${BIN}" help --man OUTPUT_FILE "${OUT}.tmp" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  file(REMOVE "${OUT}.tmp")
  message(FATAL_ERROR "cloudfit help --man failed (${rc})")
endif()
file(RENAME "${OUT}.tmp" "${OUT}")
