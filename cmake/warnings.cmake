# warnings.cmake - one warning set for every target; sanitizers when asked,
# and libFuzzer's coverage for RELAYOUT_FUZZ
function(relayout_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow
    -Wconversion -Wno-sign-conversion -Wstrict-prototypes -Wmissing-prototypes
    -Wvla -Wformat=2)
  if(RELAYOUT_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
  if(RELAYOUT_SANITIZE)
    target_compile_options(${target} PRIVATE -fsanitize=address,undefined
      -fno-sanitize-recover=all -fno-omit-frame-pointer)
    target_link_options(${target} PRIVATE -fsanitize=address,undefined)
  endif()
  if(RELAYOUT_FUZZ)
    target_compile_options(${target} PRIVATE -fsanitize=fuzzer-no-link)
  endif()
endfunction()
