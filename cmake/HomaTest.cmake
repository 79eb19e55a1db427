# HomaTest.cmake - how the tests are registered with CTest, included by
# CMakeLists.txt.  Every test of every label (unit, e2e, sim, perf, install,
# fuzz)
# goes through homa_add_test; the folders of test programs and test scripts
# use the two functions below it.

# homa_add_test(NAME name LABEL label TIMEOUT seconds COMMAND command...
#               [WORKING_DIRECTORY dir] [RUN_SERIAL] [ENVIRONMENT var=value...])
# Registers the test NAME running COMMAND (a target name or
# $<TARGET_FILE:...> may stand for a program) in WORKING_DIRECTORY (default:
# the current binary folder), with the CTest label LABEL and TIMEOUT; exit
# status 77 counts as a skip (SKIP_RETURN_CODE).
# RUN_SERIAL: it runs alone.  ENVIRONMENT: variables set for it.
function(homa_add_test)
	cmake_parse_arguments(PARSE_ARGV 0 arg "RUN_SERIAL"
		"NAME;LABEL;TIMEOUT;WORKING_DIRECTORY" "COMMAND;ENVIRONMENT")
	if(NOT arg_NAME OR NOT arg_LABEL OR NOT arg_TIMEOUT OR NOT arg_COMMAND)
		message(FATAL_ERROR "homa_add_test needs NAME, LABEL, TIMEOUT "
			"and COMMAND")
	endif()
	if(NOT arg_WORKING_DIRECTORY)
		set(arg_WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
	endif()
	add_test(NAME ${arg_NAME} COMMAND ${arg_COMMAND}
		WORKING_DIRECTORY ${arg_WORKING_DIRECTORY})
	# Exit status 77: the test skipped (it could not run here, and said
	# why); CTest reports it as not run instead of passed.
	set_tests_properties(${arg_NAME} PROPERTIES LABELS ${arg_LABEL}
		TIMEOUT ${arg_TIMEOUT} SKIP_RETURN_CODE 77)
	if(arg_RUN_SERIAL)
		set_tests_properties(${arg_NAME} PROPERTIES RUN_SERIAL TRUE)
	endif()
	if(arg_ENVIRONMENT)
		set_tests_properties(${arg_NAME} PROPERTIES
			ENVIRONMENT "${arg_ENVIRONMENT}")
	endif()
endfunction()

# homa_add_test_programs(LABEL label TIMEOUT seconds LIBS libraries...
#                        [DEFINITIONS definitions...] [WORKING_DIRECTORY dir]
#                        [RUN_SERIAL] [ENVIRONMENT var=value...])
# Every test_NAME.c of the current source folder becomes the program
# test_NAME (target LABEL_test_NAME, in the current binary folder) and the
# test LABEL.NAME (homa_add_test with the other options).  The other .c files
# of the folder are helpers: the static library homa_LABEL_helpers, compiled
# with DEFINITIONS and linked into each program.  Programs and helpers see
# the folder and HOMA_TEST_INCLUDES, and link LIBS.
function(homa_add_test_programs)
	cmake_parse_arguments(PARSE_ARGV 0 arg "" "LABEL"
		"LIBS;DEFINITIONS")
	set(dir ${CMAKE_CURRENT_SOURCE_DIR})
	file(GLOB tests CONFIGURE_DEPENDS ${dir}/test_*.c)
	file(GLOB helpers CONFIGURE_DEPENDS ${dir}/*.c)
	list(SORT tests)
	if(tests)
		list(REMOVE_ITEM helpers ${tests})
	endif()
	set(helper_lib "")
	if(helpers)
		set(helper_lib homa_${arg_LABEL}_helpers)
		add_library(${helper_lib} STATIC ${helpers})
		target_include_directories(${helper_lib} PUBLIC ${dir}
			${HOMA_TEST_INCLUDES})
		target_link_libraries(${helper_lib} PUBLIC ${arg_LIBS})
		target_compile_definitions(${helper_lib} PRIVATE
			${arg_DEFINITIONS})
	endif()
	foreach(src IN LISTS tests)
		get_filename_component(base ${src} NAME_WE)
		set(target ${arg_LABEL}_${base})
		add_executable(${target} ${src})
		target_include_directories(${target} PRIVATE ${dir}
			${HOMA_TEST_INCLUDES})
		target_link_libraries(${target} PRIVATE ${helper_lib}
			${arg_LIBS})
		set_target_properties(${target} PROPERTIES OUTPUT_NAME ${base})
		string(REGEX REPLACE "^test_" "" name ${base})
		homa_add_test(NAME ${arg_LABEL}.${name} LABEL ${arg_LABEL}
			COMMAND ${target} ${arg_UNPARSED_ARGUMENTS})
	endforeach()
endfunction()

# homa_add_test_scripts(LABEL label TIMEOUT seconds [WORKING_DIRECTORY dir]
#                       [RUN_SERIAL] [ENVIRONMENT var=value...])
# Every test_NAME.sh of the current source folder becomes the test
# LABEL.NAME, run with bash (homa_add_test with the other options); other
# .sh files there are helpers the scripts may source.
function(homa_add_test_scripts)
	cmake_parse_arguments(PARSE_ARGV 0 arg "" "LABEL" "")
	file(GLOB scripts CONFIGURE_DEPENDS
		${CMAKE_CURRENT_SOURCE_DIR}/test_*.sh)
	list(SORT scripts)
	foreach(src IN LISTS scripts)
		get_filename_component(base ${src} NAME_WE)
		string(REGEX REPLACE "^test_" "" name ${base})
		homa_add_test(NAME ${arg_LABEL}.${name} LABEL ${arg_LABEL}
			COMMAND bash ${src} ${arg_UNPARSED_ARGUMENTS})
	endforeach()
endfunction()
