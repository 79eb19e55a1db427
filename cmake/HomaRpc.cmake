# HomaRpc.cmake - what homa-rpc (src/rpc, examples/rpc, tests/rpc) needs:
# protobuf-c's library and its compiler protoc-c (Debian packages
# libprotobuf-c-dev and protobuf-c-compiler, which 'make deps' installs),
# and the function that compiles a .proto file.  Included by
# CMakeLists.txt when HOMA_RPC is ON.

find_package(PkgConfig)
if(PkgConfig_FOUND)
	pkg_check_modules(PROTOBUF_C IMPORTED_TARGET libprotobuf-c)
endif()
find_program(HOMA_PROTOC_C protoc-c)
if(NOT PROTOBUF_C_FOUND OR NOT HOMA_PROTOC_C)
	message(FATAL_ERROR "protobuf-c not found, but homa-rpc needs it.  "
		"Install it with 'make deps' (Debian packages "
		"libprotobuf-c-dev and protobuf-c-compiler), or configure "
		"with -DHOMA_RPC=OFF.")
endif()

# homa_protoc_c(VAR PROTO) - compile PROTO (a path) with protoc-c into
# NAME.pb-c.c and NAME.pb-c.h in the current binary folder; VAR is set to
# the .c file.  Code that includes NAME.pb-c.h adds that folder to its
# include path.
function(homa_protoc_c var proto)
	get_filename_component(name ${proto} NAME_WE)
	get_filename_component(dir ${proto} DIRECTORY)
	set(out ${CMAKE_CURRENT_BINARY_DIR})
	add_custom_command(OUTPUT ${out}/${name}.pb-c.c ${out}/${name}.pb-c.h
		COMMAND ${HOMA_PROTOC_C} --c_out=${out} -I${dir} ${proto}
		DEPENDS ${proto}
		COMMENT "protoc-c ${name}.proto"
		VERBATIM)
	set(${var} ${out}/${name}.pb-c.c PARENT_SCOPE)
endfunction()
