# embed.cmake - turns kernels/*.cl into a C array (C11 guarantees string
# literals of only 4,095 characters, so bytes it is).
# usage: cmake -DIN=file.cl -DOUT=file.c -DNAME=symbol -P embed.cmake
file(READ "${IN}" hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n" bytes "${bytes}")
file(WRITE "${OUT}" "/* generated from ${IN} by cmake/embed.cmake */\nconst char ${NAME}[] = {\n${bytes}0x00};\n")
