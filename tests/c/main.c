/* main.c — build/test_c: the unit tests of the C core, a suite per layer or format, under ASan and
 * UBSan (make test-c).   build/test_c [NAME]: only the tests whose name contains NAME */
#include "harness.h"

extern const test_case base_tests[], codecs_tests[], formats_tests[], safetensors_tests[], bintensors_tests[],
    apr_tests[], trees_tests[], layout_tests[], quant_tests[], model_tests[], onnx_tests[], graph_tests[], text_tests[], encoder_tests[],
    encoder_kernel_tests[];

int main(int argc, char **argv) {
    static const test_case *const suites[] = {base_tests, codecs_tests, formats_tests, safetensors_tests, bintensors_tests,
                                              apr_tests, trees_tests, layout_tests, quant_tests, model_tests, onnx_tests,
                                              graph_tests, text_tests, encoder_tests,
                                              encoder_kernel_tests, NULL};
    return run_tests(suites, argc > 1 ? argv[1] : NULL, 60);
}
