# workloads.cmake - the workloads W1-W5 (workloads/*.cdf), included by
# CMakeLists.txt:
# - homa_workloads: a static library holding their text, generated at build
#   time by embed_workloads.cmake (tools/common/homa_workloads.h declares
#   it); a tool linked with it takes the data only when it uses them;
# - installed to <prefix>/share/libhoma/workloads.
set(HOMA_WORKLOAD_DIR ${CMAKE_CURRENT_SOURCE_DIR}/workloads)
file(GLOB HOMA_WORKLOAD_FILES CONFIGURE_DEPENDS ${HOMA_WORKLOAD_DIR}/*.cdf)
list(SORT HOMA_WORKLOAD_FILES)
set(HOMA_WORKLOAD_C ${CMAKE_CURRENT_BINARY_DIR}/generated/homa_workloads_data.c)
add_custom_command(OUTPUT ${HOMA_WORKLOAD_C}
	COMMAND ${CMAKE_COMMAND} -DIN_DIR=${HOMA_WORKLOAD_DIR}
		-DOUT=${HOMA_WORKLOAD_C}
		-P ${CMAKE_CURRENT_SOURCE_DIR}/cmake/embed_workloads.cmake
	DEPENDS ${HOMA_WORKLOAD_FILES}
		${CMAKE_CURRENT_SOURCE_DIR}/cmake/embed_workloads.cmake
	COMMENT "Embedding workloads/*.cdf"
	VERBATIM)
add_library(homa_workloads STATIC ${HOMA_WORKLOAD_C})
target_link_libraries(homa_workloads PUBLIC homa_workload)
target_include_directories(homa_workloads PUBLIC
	${CMAKE_CURRENT_SOURCE_DIR}/tools/common)
install(FILES ${HOMA_WORKLOAD_FILES}
	DESTINATION ${CMAKE_INSTALL_DATADIR}/libhoma/workloads)
