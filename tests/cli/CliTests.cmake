# Command-line behaviour: every bad input exits non-zero with one line on
# stderr that names the file and the place. Included from tests/CMakeLists.txt.
set(BAD ${PROJECT_SOURCE_DIR}/tests/data/bad)
set(ZOO ${PROJECT_SOURCE_DIR}/tests/data/zoo)
set(EXPECT_ERROR ${CMAKE_CURRENT_SOURCE_DIR}/cli/expect_error.sh)

function(perfc_expect_error name regex)
  add_test(NAME cli.error.${name}
           COMMAND ${EXPECT_ERROR} "${regex}" $<TARGET_FILE:perfc> ${ARGN})
endfunction()

perfc_expect_error(no_model "no model given")
perfc_expect_error(missing_file "/nonexistent/m.onnx: cannot read the file"
                   /nonexistent/m.onnx)
perfc_expect_error(directory "${BAD}: cannot read the file" ${BAD})
perfc_expect_error(empty "empty.onnx: the file is empty" ${BAD}/empty.onnx)
# Not a regular file: a device is refused before it is read (as --hw and
# --strategy do; support/RegularFile.h).
perfc_expect_error(model_not_a_file
                   "/dev/zero: cannot read the file: it is not a regular file$"
                   /dev/zero)
perfc_expect_error(not_onnx "not_onnx.onnx: malformed protobuf at byte [0-9]+"
                   ${BAD}/not_onnx.onnx)
perfc_expect_error(truncated "truncated.onnx: malformed protobuf at byte [0-9]+: .*truncated"
                   ${BAD}/truncated.onnx)
perfc_expect_error(cycle "cycle.onnx: node 'add_on_cycle' \\(Add\\) is on a cycle"
                   ${BAD}/cycle.onnx)
perfc_expect_error(missing_edge "missing_edge.onnx: node 'reads_ghost' \\(Add\\) reads tensor 'ghost', which no node"
                   ${BAD}/missing_edge.onnx)
perfc_expect_error(overflow "dim_2e62.onnx: tensor 'x' .* the dimensions overflow"
                   ${BAD}/dim_2e62.onnx)
perfc_expect_error(negative_dim "negative_dim.onnx: input 'x' dimension 1 is negative"
                   ${BAD}/negative_dim.onnx)
perfc_expect_error(future_opset "future_opset.onnx: opset 99 is newer"
                   ${BAD}/future_opset.onnx)
perfc_expect_error(duplicate_names "duplicate_names.onnx: node 'second' \\(Neg\\) writes tensor 'y', which is also written by node 'first'"
                   ${BAD}/duplicate_names.onnx)
perfc_expect_error(unknown_op "unknown_op.onnx: node 'frob' \\(Frobnicate\\): 'Frobnicate' is not an op"
                   ${BAD}/unknown_op.onnx)
perfc_expect_error(unbound_dim "unbound_dim.onnx: input 'x' dimension 1 is symbolic \\('seq'\\): bind it with --dim seq=VALUE"
                   ${BAD}/unbound_dim.onnx)
perfc_expect_error(uninferable "uninferable_reshape.onnx: cannot infer the shape of tensor 'y' \\(output of node 'runtime_reshape', Reshape\\)"
                   ${BAD}/uninferable_reshape.onnx)
perfc_expect_error(shape_mismatch "shape_mismatch.onnx: node 'bad_conv' \\(Conv\\): .*channels"
                   ${BAD}/shape_mismatch.onnx)
perfc_expect_error(bad_dim_flag "--dim 'seq': expected NAME=VALUE"
                   ${ZOO}/resnet18.onnx --dim seq)
perfc_expect_error(unknown_dim_name "no input dimension is named 'seq'"
                   ${ZOO}/resnet18.onnx --dim seq=4)
perfc_expect_error(zero_batch "--batch 0: the batch must be positive"
                   ${ZOO}/resnet18.onnx --batch 0)
perfc_expect_error(bad_format "format" ${ZOO}/resnet18.onnx --format xml)
perfc_expect_error(unknown_flag "--frobnicate" ${ZOO}/resnet18.onnx --frobnicate)
# Values llvm::cl cannot parse (it reports them on stderr itself): still one
# line, naming the option and what it expects; a misspelt option with
# LLVM's suggestion.
perfc_expect_error(bad_integer_flag "--batch 'abc': expected an integer"
                   ${ZOO}/resnet18.onnx --batch abc)
perfc_expect_error(negative_unsigned_flag "--dp '-3': expected a non-negative integer"
                   ${ZOO}/resnet18.onnx --train --dp=-3)
perfc_expect_error(negative_global_batch "--global-batch -5: give a positive number of samples per step"
                   ${ZOO}/resnet18.onnx --hw a100-sxm4-80gb --train --global-batch=-5)
perfc_expect_error(time_limit_nan "--time-limit nan: give a number of seconds, 0 or more"
                   ${ZOO}/resnet18.onnx --hw dgx-a100 --train --plan --global-batch 64 --time-limit nan)
perfc_expect_error(plan_zero_devices "--devices 0: give how many"
                   ${ZOO}/resnet18.onnx --hw dgx-a100 --train --plan --global-batch 64 --devices 0)
perfc_expect_error(bad_number_flag "--time-limit 'soon': expected a number"
                   ${ZOO}/resnet18.onnx --time-limit soon)
perfc_expect_error(misspelt_flag "'--formt'\\. Did you mean '--format'\\?"
                   ${ZOO}/resnet18.onnx --formt json)
perfc_expect_error(calibrate_zero_rounds "calibrate: --rounds 0: give 1 to 50"
                   calibrate --rounds 0 --out ${CMAKE_CURRENT_BINARY_DIR}/never.yaml)
perfc_expect_error(calibrate_many_rounds "calibrate: --rounds 5000: give 1 to 50"
                   calibrate --rounds 5000 --out ${CMAKE_CURRENT_BINARY_DIR}/never.yaml)
perfc_expect_error(calibrate_bad_rounds "--rounds 'two': expected a non-negative integer"
                   calibrate --rounds two --out ${CMAKE_CURRENT_BINARY_DIR}/never.yaml)
perfc_expect_error(unwritable_output "/nonexistent/dir/out.json: cannot write"
                   ${ZOO}/resnet18.onnx -o /nonexistent/dir/out.json)

# Success paths: exit 0 and the documented JSON fields.
add_test(NAME cli.version COMMAND $<TARGET_FILE:perfc> --version)
set_tests_properties(cli.version PROPERTIES PASS_REGULAR_EXPRESSION "perfc [0-9]+\\.[0-9]+")
add_test(NAME cli.help COMMAND $<TARGET_FILE:perfc> --help)
set_tests_properties(cli.help PROPERTIES PASS_REGULAR_EXPRESSION "--batch.*--dim")
add_test(NAME cli.json_schema
         COMMAND ${CMAKE_COMMAND} -DPERFC=$<TARGET_FILE:perfc>
                 -DMODEL=${ZOO}/resnet50.onnx
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/cli/CheckJsonSchema.cmake)
# With --train the per-node report is the step's forward pass in the training
# precision: its 41 kernels (batch norm unfolded, reading its input twice;
# inference runs 23), --dtype bf16 computing in bf16 and storing 2-byte
# tensors (half the fp32 step's kernel bytes, 95776320); --compute-type
# still overrides.
# Each pattern starts at the one "kernels" key: CMake's backtracking regex
# took 18 s when it started at each of the 24 "compute_type" keys.
add_test(NAME cli.train_precision.fp32
         COMMAND $<TARGET_FILE:perfc> ${ZOO}/resnet18.onnx --hw a100-sxm4-80gb
                 --train --format json)
set_tests_properties(cli.train_precision.fp32 PROPERTIES
  PASS_REGULAR_EXPRESSION "\"kernels\": 41,.*\"kernel_bytes\": 95776320,.*\"compute_type\": \"fp32\""
  FAIL_REGULAR_EXPRESSION "\"compute_type\": \"(bf16|fp16|tf32)\"")
add_test(NAME cli.train_precision.bf16
         COMMAND $<TARGET_FILE:perfc> ${ZOO}/resnet18.onnx --hw a100-sxm4-80gb
                 --train --dtype bf16 --format json)
set_tests_properties(cli.train_precision.bf16 PROPERTIES
  PASS_REGULAR_EXPRESSION "\"kernels\": 41,.*\"kernel_bytes\": 47888160,.*\"compute_type\": \"bf16\""
  FAIL_REGULAR_EXPRESSION "\"compute_type\": \"(fp32|fp16|tf32)\"")
add_test(NAME cli.train_precision.override
         COMMAND $<TARGET_FILE:perfc> ${ZOO}/resnet18.onnx --hw a100-sxm4-80gb
                 --train --dtype bf16 --compute-type fp16 --format json)
set_tests_properties(cli.train_precision.override PROPERTIES
  PASS_REGULAR_EXPRESSION "\"kernels\": 41,.*\"kernel_bytes\": 47888160,.*\"compute_type\": \"fp16\""
  FAIL_REGULAR_EXPRESSION "\"compute_type\": \"(fp32|bf16|tf32)\"")
# ... and says the step still trains in --dtype.
add_test(NAME cli.train_precision.override_warns
         COMMAND $<TARGET_FILE:perfc> ${ZOO}/resnet18.onnx --hw a100-sxm4-80gb
                 --train --dtype bf16 --storage-type int8 --ops 0)
set_tests_properties(cli.train_precision.override_warns PROPERTIES
  PASS_REGULAR_EXPRESSION "warning: .*resnet18.onnx: the per-node forward is priced with storage int8\; the step trains in bf16 \\(--dtype\\)")
# Each kernel's row carries the step's backward through it.
add_test(NAME cli.train_node_backward
         COMMAND $<TARGET_FILE:perfc> ${ZOO}/resnet18.onnx --hw a100-sxm4-80gb
                 --train --ops 3)
set_tests_properties(cli.train_node_backward PROPERTIES
  PASS_REGULAR_EXPRESSION "forward +backward +share +bound")
add_test(NAME cli.train_node_backward_json
         COMMAND $<TARGET_FILE:perfc> ${ZOO}/resnet18.onnx --hw a100-sxm4-80gb
                 --train --format json)
set_tests_properties(cli.train_node_backward_json PROPERTIES
  PASS_REGULAR_EXPRESSION "\"backward_s\": [0-9.e-]+,[^}]*\"backward_explain\": \"[0-9]+ products? of the forward's size")
add_test(NAME cli.table
         COMMAND $<TARGET_FILE:perfc> ${ZOO}/resnet50.onnx --batch 2)
set_tests_properties(cli.table PROPERTIES PASS_REGULAR_EXPRESSION
  "input +input fp32 \\[2, 3, 224, 224\\].*MACs +8\\.178 G.*heaviest ops")

# cuDNN's conv library on an A100: TF32 tensor-core convolutions in NCHW pay
# transposes (layout_s); FP32 3x3 stride-1 ones on CUDA cores run Winograd.
add_test(NAME cli.conv_layout_json
         COMMAND $<TARGET_FILE:perfc> ${ZOO}/resnet18.onnx --hw a100-sxm4-80gb
                 --compute-type tf32 --conv-layout nchw --format json)
set_tests_properties(cli.conv_layout_json PROPERTIES PASS_REGULAR_EXPRESSION
  "\"op\": \"Conv\".*\"layout_s\": [0-9.e-]+")
add_test(NAME cli.winograd_json
         COMMAND $<TARGET_FILE:perfc> ${ZOO}/resnet18.onnx --hw a100-sxm4-80gb
                 --format json)
set_tests_properties(cli.winograd_json PROPERTIES PASS_REGULAR_EXPRESSION
  "\"winograd_reduction\": 2.25")

# Hardware: latency fields in the JSON, the hw subcommands, their errors.
add_test(NAME cli.hw_json
         COMMAND $<TARGET_FILE:perfc> ${ZOO}/resnet18.onnx --hw a100-sxm4-80gb
                 --compute-type fp16 --format json)
set_tests_properties(cli.hw_json PROPERTIES PASS_REGULAR_EXPRESSION
  "\"hardware\": {.*\"device\": \"a100-sxm4-80gb\".*\"totals\": {.*\"latency_s\": [0-9.e-]+,.*\"kernels\": [0-9]+.*\"nodes\": \\[.*\"latency_s\".*\"bound\": \"(compute|memory|overhead)\".*\"exec\": \"kernel\"")
add_test(NAME cli.hw_table
         COMMAND $<TARGET_FILE:perfc> ${ZOO}/resnet18.onnx --hw zen5-2vcpu)
set_tests_properties(cli.hw_table PROPERTIES PASS_REGULAR_EXPRESSION
  "latency +[0-9.]+ ms.*kernels +[0-9]+ \\([0-9]+ nodes fused")
add_test(NAME cli.hw_list COMMAND $<TARGET_FILE:perfc> hw list)
set_tests_properties(cli.hw_list PROPERTIES PASS_REGULAR_EXPRESSION
  "devices:.*a100-sxm4-80gb.*links:.*infiniband-ndr.*clusters:.*dgx-a100")
add_test(NAME cli.hw_show COMMAND $<TARGET_FILE:perfc> hw show h100-sxm5-80gb)
set_tests_properties(cli.hw_show PROPERTIES PASS_REGULAR_EXPRESSION
  "h100-sxm5-80gb.*tensor.*sources")
perfc_expect_error(hw_unknown_name "unknown hardware 'nosuch'; run 'perfc hw list'"
                   ${ZOO}/resnet18.onnx --hw nosuch)
perfc_expect_error(hw_show_unknown "unknown hardware 'nosuch'" hw show nosuch)
# The development machine's depthwise floor, measured by perfc calibrate
# and cited in the description (hwdb/devices/zen5-2vcpu.yaml, source [4]).
add_test(NAME cli.hw_show_depthwise_floor
         COMMAND $<TARGET_FILE:perfc> hw show zen5-2vcpu)
set_tests_properties(cli.hw_show_depthwise_floor PROPERTIES
  PASS_REGULAR_EXPRESSION "depthwise_conv  \\[8 MFLOP: 0.11, 15 MFLOP: 0.35\\] / 0.8 / 138.3 ps per output.*\\[4\\] depthwise time_per_output 0.1383 ns")
# The V100's GEMM curves, tensor and CUDA cores apart, each cited.
add_test(NAME cli.hw_show_vector_compute
         COMMAND $<TARGET_FILE:perfc> hw show v100-sxm2-32gb)
set_tests_properties(cli.hw_show_vector_compute PROPERTIES
  PASS_REGULAR_EXPRESSION "gemm +\\[2.1 GFLOP: 0.46,[^]]*\\] / 0.8\n +\\[2.1 GFLOP: 0.67,[^]]*2.1 TFLOP: 0.92\\] on the vector units.*\\[7\\] Tesla V100-SXM2-16GB")
perfc_expect_error(hw_bad_subcommand "hw: unknown command 'frob'" hw frob)
# For scripts: the list as JSON; a bundled file as is, which loads again
# from a file of one's own (a cluster's references stay bundled names).
add_test(NAME cli.hw_list_json COMMAND $<TARGET_FILE:perfc> hw list --format json)
set_tests_properties(cli.hw_list_json PROPERTIES PASS_REGULAR_EXPRESSION
  "^{\n  \"devices\": \\[\n    {\n      \"name\": \"a100-sxm4-40gb\",\n      \"path\": \"hwdb/devices/a100-sxm4-40gb.yaml\",\n      \"summary\": \"gpu NVIDIA\;.*\"links\": \\[.*\"name\": \"nvlink3\".*\"clusters\": \\[.*\"name\": \"dgx-a100\"")
add_test(NAME cli.hw_show_yaml_round_trip
         COMMAND sh -c "$<TARGET_FILE:perfc> hw show dgx-a100 --format yaml > ${CMAKE_CURRENT_BINARY_DIR}/my-dgx.yaml && $<TARGET_FILE:perfc> hw show ${CMAKE_CURRENT_BINARY_DIR}/my-dgx.yaml")
set_tests_properties(cli.hw_show_yaml_round_trip PROPERTIES
  PASS_REGULAR_EXPRESSION "^dgx-a100: NVIDIA DGX A100 640GB.*a100-sxm4-80gb: NVIDIA A100 SXM4 80GB")
perfc_expect_error(hw_show_yaml_path "'./mine.yaml' is a file path, not the name of a bundled description"
                   hw show ./mine.yaml --format yaml)
perfc_expect_error(hw_list_format "hw list: --format yaml: use table or json$"
                   hw list --format yaml)
# The data-parallel exchange explained: ZeRO 2 reduce-scatters every
# micro-batch's gradients and all-gathers the parameters once.
add_test(NAME cli.train_dp_explain
         COMMAND $<TARGET_FILE:perfc> ${ZOO}/gpt2_small.onnx --dim seq=128 --hw dgx-a100
                 --train --dp 8 --global-batch 32 --zero 2 --explain --ops 0)
set_tests_properties(cli.train_dp_explain PROPERTIES PASS_REGULAR_EXPRESSION
  "dp 8, ZeRO 2: 4 x reduce-scatter of [0-9.]+ MB of gradients in buckets, each during its micro-batch's backward [0-9.]+ [mu]s \\([0-9.]+ [mun]?s after it\\) \\+ all-gather of [0-9.]+ MB of parameters after the optimizer [0-9.]+ [mu]s = [0-9.]+ [mu]?s\; exposed 4 x ")
# A SoC (several kinds of processor in one node) trains on one of them.
perfc_expect_error(train_soc "cluster 'jetson-agx-orin' holds several kinds of processor in one node \\(jetson-agx-orin-cpu, jetson-agx-orin-gpu, jetson-agx-orin-dla\\); a training step runs on one kind: give it alone, e.g. 'jetson-agx-orin-gpu'"
                   ${ZOO}/resnet18.onnx --hw jetson-agx-orin --train)
perfc_expect_error(plan_soc "cluster 'snapdragon-8-gen-2' holds several kinds of processor in one node .*e.g. 'snapdragon-8-gen-2-gpu'"
                   ${ZOO}/resnet18.onnx --hw snapdragon-8-gen-2 --train --plan --global-batch 8)
perfc_expect_error(compute_type "unknown --compute-type 'fp9'"
                   ${ZOO}/resnet18.onnx --hw t4 --compute-type fp9)
perfc_expect_error(unsupported_on_device
  "resnet18.onnx: node '/conv1/Conv' \\(Conv\\): device 'jetson-agx-orin-dla' does not run fp32 conv ops"
  ${ZOO}/resnet18.onnx --hw jetson-agx-orin-dla)

# Robustness (issue 7): inputs that crashed something once, damaged models,
# a model too big to take, broken hardware descriptions. Every case names
# the exact error it must give.
perfc_expect_error(untyped_input
  "untyped_input.onnx: cannot infer the shape of tensor 'y' \\(output of node 'shape_of_untyped', Shape\\)"
  ${BAD}/untyped_input.onnx)
perfc_expect_error(shape_of_custom_op
  "shape_of_custom_op.onnx: cannot infer the shape of tensor 'y' \\(output of node 'shape_of_custom', Shape\\)"
  ${BAD}/shape_of_custom_op.onnx)
perfc_expect_error(initializer_no_data
  "initializer_no_data.onnx: initializer 'limit' holds 0 values but its shape \\[\\] needs 1: the file is corrupt or was cut short\; re-export the model"
  ${BAD}/initializer_no_data.onnx)
perfc_expect_error(zero_stride
  "zero_stride.onnx: node 'zero_stride' \\(Conv\\): 'strides' holds 0; every stride must be positive"
  ${BAD}/zero_stride.onnx)
perfc_expect_error(conv_rank_mismatch
  "conv_rank_mismatch.onnx: cannot infer the shape of tensor 'y' \\(output of node 'rank_mismatch', ConvTranspose\\).*the input has rank 4 but the weight has rank 2; they must be equal\\)$"
  ${BAD}/conv_rank_mismatch.onnx)
perfc_expect_error(bitflip_1
  "bitflip_1.onnx: node '/layer1/layer1.0/relu_1/Relu' \\(Relu\\) reads tensor '/layer1/layer1.0/Add_outptt_0', which no node, input or initializer defines"
  ${BAD}/bitflip_1.onnx)
perfc_expect_error(bitflip_2
  "bitflip_2.onnx: node '/layer2/layer2.0/bn2/BatchNormalization' \\(BatchNormalization\\) reads tensor 'layer2.0.bn2.weight', which no node, input or initializer defines"
  ${BAD}/bitflip_2.onnx)
perfc_expect_error(bitflip_3
  "bitflip_3.onnx: malformed protobuf at byte 16295: a field of 1293 bytes runs past the end of the data"
  ${BAD}/bitflip_3.onnx)
perfc_expect_error(bitflip_4
  "bitflip_4.onnx: node '/layer2/layer2.0/bn1/BatchNormalization' \\(BatchNormalization\\) reads tensor '/layer2/layer2.0/conv1/Conv_output_0', which no node, input or initializer defines"
  ${BAD}/bitflip_4.onnx)

perfc_expect_error(initializers_2e62
  "initializers_2e62.onnx: initializer 'w2' of shape \\[576460752303423488\\] brings the weights past 2\\^62 bytes in total: the dimensions overflow$"
  ${BAD}/initializers_2e62.onnx)
perfc_expect_error(conv_huge_dim
  "conv_huge_dim.onnx: tensor 'x' of shape \\[1, 3, 9223372036854775807, 8\\] holds more than 2\\^62 bytes: the dimensions overflow$"
  ${BAD}/conv_huge_dim.onnx)
perfc_expect_error(newline_name
  "newline_name.onnx: graph output 'y\\\\0Az' is not produced by any node$"
  ${BAD}/newline_name.onnx)
perfc_expect_error(duplicate_initializer
  "duplicate_initializer.onnx: initializer 'w' is defined twice$"
  ${BAD}/duplicate_initializer.onnx)

# 200 deterministic bit-flip variants of resnet18, made at test time: each
# gives a result or one error line, never a crash or a hang. Four tests of
# 50 (seeds 1-4), so that CTest runs them side by side: as one test it was
# the sanitizer suite's longest (100 s).
foreach(seed 1 2 3 4)
  add_test(NAME cli.bitflip.generated.${seed}
           COMMAND perfc_stress bitflip $<TARGET_FILE:perfc> ${ZOO}/resnet18.onnx
                   50 ${seed})
  set_tests_properties(cli.bitflip.generated.${seed} PROPERTIES TIMEOUT 900)
endforeach()

# Ten million nodes (an 80 MB file written at test time, removed after):
# refused by the node limit while the file streams, in bounded memory.
set(BIG_MODEL ${CMAKE_CURRENT_BINARY_DIR}/ten_million_nodes.onnx)
if(PERFC_SANITIZE)
  set(BIG_MODEL_MAX_RSS_MB 400) # ASan's shadow memory and quarantine.
else()
  set(BIG_MODEL_MAX_RSS_MB 150)
endif()
add_test(NAME cli.big_model.write
         COMMAND perfc_stress big-model ${BIG_MODEL} 10000000)
set_tests_properties(cli.big_model.write PROPERTIES FIXTURES_SETUP big_model)
add_test(NAME cli.error.ten_million_nodes
         COMMAND perfc_stress max-rss ${BIG_MODEL_MAX_RSS_MB} ${EXPECT_ERROR}
                 "ten_million_nodes.onnx: the model has more than 2000000 nodes, perfc's limit \\(raise it with --max-nodes\\)"
                 $<TARGET_FILE:perfc> ${BIG_MODEL})
set_tests_properties(cli.error.ten_million_nodes PROPERTIES
                     FIXTURES_REQUIRED big_model)
add_test(NAME cli.big_model.remove COMMAND ${CMAKE_COMMAND} -E rm -f ${BIG_MODEL})
set_tests_properties(cli.big_model.remove PROPERTIES FIXTURES_CLEANUP big_model)

# Hardware descriptions with one mistake each (tests/data/bad/hw/, written by
# tools/make_bad_corpus.py): FILE:LINE:COL and what is wrong.
set(BAD_HW ${BAD}/hw)
perfc_expect_error(hw_wrong_type
  "wrong_type.yaml:9:20: 'launch_overhead' must be a single value, not a mapping; write e.g. 'launch_overhead: 5 us'$"
  ${ZOO}/resnet18.onnx --hw ${BAD_HW}/wrong_type.yaml)
perfc_expect_error(hw_wrong_type_scalar
  "wrong_type_scalar.yaml:4:12: compute must be a mapping of 'key: value' entries, not a single value"
  ${ZOO}/resnet18.onnx --hw ${BAD_HW}/wrong_type_scalar.yaml)
perfc_expect_error(hw_unknown_key
  "unknown_key.yaml:4:3: unknown key 'frobnicate' in device; the known keys are name, kind"
  ${ZOO}/resnet18.onnx --hw ${BAD_HW}/unknown_key.yaml)
perfc_expect_error(hw_missing_unit
  "missing_unit.yaml:8:47: 'bandwidth': bandwidth '1000' has no unit; write e.g. '1000 GB/s'"
  ${ZOO}/resnet18.onnx --hw ${BAD_HW}/missing_unit.yaml)
perfc_expect_error(hw_negative_bandwidth
  "negative_bandwidth.yaml:8:47: 'bandwidth': negative bandwidth '-1000 GB/s'; a bandwidth must be greater than zero"
  ${ZOO}/resnet18.onnx --hw ${BAD_HW}/negative_bandwidth.yaml)
perfc_expect_error(hw_zero_devices
  "zero_devices.yaml:3:3: 'nodes' is empty; a cluster has at least one node group"
  ${ZOO}/resnet18.onnx --hw ${BAD_HW}/zero_devices.yaml)
perfc_expect_error(hw_zero_devices_per_node
  "zero_devices_per_node.yaml:5:25: 'devices_per_node': count is zero; it must be at least 1"
  ${ZOO}/resnet18.onnx --hw ${BAD_HW}/zero_devices_per_node.yaml)
perfc_expect_error(hw_zero_count
  "zero_count.yaml:5:14: 'count': count is zero; it must be at least 1$"
  ${ZOO}/resnet18.onnx --hw ${BAD_HW}/zero_count.yaml)
perfc_expect_error(hw_duplicate_key
  "duplicate_key.yaml:4:3: duplicate key 'kind' in device \\(first at line 3\\); keep only one$"
  ${ZOO}/resnet18.onnx --hw ${BAD_HW}/duplicate_key.yaml)
perfc_expect_error(hw_unknown_unit
  "unknown_unit.yaml:8:47: 'bandwidth': unknown bandwidth unit 'furlongs/s'; use one of B/s"
  ${ZOO}/resnet18.onnx --hw ${BAD_HW}/unknown_unit.yaml)
# Not a regular file: /dev/zero never ends, so it must not be read.
perfc_expect_error(hw_not_a_file
  "/dev/zero: cannot read the file: it is not a regular file; check the path"
  ${ZOO}/resnet18.onnx --hw /dev/zero)

# perfc zoo: generated transformers import with their published counts.
set(ZOO_OUT ${CMAKE_CURRENT_BINARY_DIR}/zoo_llama2_7b.onnx)
add_test(NAME cli.zoo_write
         COMMAND $<TARGET_FILE:perfc> zoo llama --layers 32 --hidden 4096
                 --heads 32 --seq 4096 --vocab 32000 -o ${ZOO_OUT})
set_tests_properties(cli.zoo_write PROPERTIES FIXTURES_SETUP zoo_llama
  PASS_REGULAR_EXPRESSION "llama, 32 layers.*ffn 11008.*: 6,738,415,616 parameters")
add_test(NAME cli.zoo_import COMMAND $<TARGET_FILE:perfc> ${ZOO_OUT} --format json)
set_tests_properties(cli.zoo_import PROPERTIES FIXTURES_REQUIRED zoo_llama
  PASS_REGULAR_EXPRESSION "\"shape\": \"\\[1, 4096, 32000\\]\".*\"params\": 6738415616")
# A decoding step (--past): 9 inputs, the table shows four and a count, and
# the peak memory holds the weights and the 4 layers' key/value caches.
set(ZOO_DECODE ${CMAKE_CURRENT_BINARY_DIR}/zoo_decode.onnx)
add_test(NAME cli.zoo_decode_write
         COMMAND $<TARGET_FILE:perfc> zoo llama --layers 4 --hidden 256
                 --heads 4 --seq 1 --past 63 --vocab 1000 --batch 1
                 -o ${ZOO_DECODE})
set_tests_properties(cli.zoo_decode_write PROPERTIES FIXTURES_SETUP zoo_decode
  PASS_REGULAR_EXPRESSION "seq 1 after 63 cached")
add_test(NAME cli.zoo_decode_predict
         COMMAND $<TARGET_FILE:perfc> ${ZOO_DECODE} --hw a100-sxm4-80gb)
set_tests_properties(cli.zoo_decode_predict PROPERTIES
  FIXTURES_REQUIRED zoo_decode
  PASS_REGULAR_EXPRESSION "input     \\.\\.\\. 5 more, to past\\.3\\.value.*memory    [0-9.]+ MB at peak \\(weights [0-9.]+ MB, activations [0-9.]+ KB")
# The largest batch that fits: the 4 layers' caches (2 x 64 x 256 fp32
# each, 524,288 bytes a sequence, the activations alive beside them) past
# the weights, in the A100's 80 GiB: floor((85,899,345,920 - 15,689,260) /
# 524,288) = 163,810.
add_test(NAME cli.max_batch
         COMMAND $<TARGET_FILE:perfc> ${ZOO_DECODE} --hw a100-sxm4-80gb)
set_tests_properties(cli.max_batch PROPERTIES
  FIXTURES_REQUIRED zoo_decode
  PASS_REGULAR_EXPRESSION "fits in 85.90 GB\nmax batch 163810 fit: 524.3 KB a sample past the weights \\(the first input's leading dimension\; all but the weights taken to grow with it\\)\n")
add_test(NAME cli.max_batch_json
         COMMAND $<TARGET_FILE:perfc> ${ZOO_DECODE} --hw a100-sxm4-80gb
                 --format json --explain)
set_tests_properties(cli.max_batch_json PROPERTIES
  FIXTURES_REQUIRED zoo_decode
  PASS_REGULAR_EXPRESSION "\"weights_bytes\": 15689260,.*\"complete\": true,[ \n]+\"max_batch\": 163810,[ \n]+\"bytes_per_sample\": 524288,[ \n]+\"explain\": \"peak .*. max batch 163810 = floor\\(\\(capacity 85.9 GB - weights 15.69 MB\\) / 524.3 KB a sample\\)")
# --max-batch: the model imported again at the estimate, which fits, and
# one more, which does not; the report is the run at 163,810 sequences.
add_test(NAME cli.max_batch_search
         COMMAND $<TARGET_FILE:perfc> ${ZOO_DECODE} --hw a100-sxm4-80gb
                 --max-batch)
set_tests_properties(cli.max_batch_search PROPERTIES
  FIXTURES_REQUIRED zoo_decode
  PASS_REGULAR_EXPRESSION "input     input_ids int64 \\[163810, 1\\].*fits in 85.90 GB\nmax batch 163810 fit: .*\n          --max-batch: predicted at batch 163810, the largest that fits \\(estimate 163810 from batch 1\; tried 163810 fits, 163811 does not fit\\)\n")
add_test(NAME cli.max_batch_search_json
         COMMAND $<TARGET_FILE:perfc> ${ZOO_DECODE} --hw a100-sxm4-80gb
                 --max-batch --format json)
set_tests_properties(cli.max_batch_search_json PROPERTIES
  FIXTURES_REQUIRED zoo_decode
  PASS_REGULAR_EXPRESSION "\"batch_search\": {[ \n]+\"batch\": 163810,[ \n]+\"from_batch\": 1,[ \n]+\"estimate\": 163810,[ \n]+\"limit\": 655240,[ \n]+\"tried\": \\[[ \n]+{[ \n]+\"batch\": 163810,[ \n]+\"fits\": true,[ \n]+\"latency_s\": [0-9.e-]+[ \n]+},[ \n]+{[ \n]+\"batch\": 163811,[ \n]+\"fits\": false,[ \n]+\"latency_s\": [0-9.e-]+[ \n]+}[ \n]+\\]")
perfc_expect_error(max_batch_train
  "--max-batch finds the largest inference batch that fits\; a training step's micro-batch is --micro-batch"
  ${ZOO}/gpt2_small.onnx --hw dgx-a100 --train --max-batch)
perfc_expect_error(max_batch_needs_hw
  "--max-batch needs --hw: what fits depends on the device's memory"
  ${ZOO}/gpt2_small.onnx --max-batch)
perfc_expect_error(max_batch_plan_latency
  "--plan --max-batch ranks each layout at its largest batch by samples/s per device\; the lowest latency is a batch of 1: drop --objective latency or --max-batch"
  ${ZOO}/gpt2_small.onnx --dim seq=16 --hw dgx-a100 --plan --max-batch --objective latency)
perfc_expect_error(max_batch_none_fits
  "resnet50.onnx: --max-batch: not one sample fits: [0-9.]+ MB a sample beside 102.4 MB of weights in 100 MB"
  ${ZOO}/resnet50.onnx --hw a100-sxm4-80gb --memory-reserve "85799345920 B" --max-batch)
# --max-batch --max-latency: the largest batch whose step meets the bound
# too; here the bound binds long before the memory (163,810 take 145 ms).
add_test(NAME cli.max_batch_latency
         COMMAND $<TARGET_FILE:perfc> ${ZOO_DECODE} --hw a100-sxm4-80gb
                 --max-batch --max-latency "50 ms" --ops 0)
set_tests_properties(cli.max_batch_latency PROPERTIES
  FIXTURES_REQUIRED zoo_decode
  PASS_REGULAR_EXPRESSION "input     input_ids int64 \\[[0-9]+, 1\\].*\nlatency   (4[0-9]|50)\\.[0-9]+ ms\n.*--max-batch: predicted at batch [0-9]+, the largest that fits and takes at most 50.000 ms \\(estimate 163810 from batch 1\; tried 163810 takes 144.9 ms, 81905 takes [0-9.]+ ms, 40952 fits in [0-9.]+ ms, ")
add_test(NAME cli.max_batch_latency_json
         COMMAND $<TARGET_FILE:perfc> ${ZOO_DECODE} --hw a100-sxm4-80gb
                 --max-batch --max-latency "50 ms" --format json --ops 0)
set_tests_properties(cli.max_batch_latency_json PROPERTIES
  FIXTURES_REQUIRED zoo_decode
  PASS_REGULAR_EXPRESSION "\"limit\": 655240,[ \n]+\"max_latency_s\": 0.05[0-9]*,[ \n]+\"tried\": \\[[ \n]+{[ \n]+\"batch\": 163810,[ \n]+\"fits\": true,[ \n]+\"latency_s\": 0.14[0-9]+,[ \n]+\"meets_latency\": false[ \n]+},")
perfc_expect_error(max_batch_latency_unmet
  "zoo_decode.onnx: --max-batch: not even a batch of 1 meets --max-latency 1 us: it takes [0-9.]+ us\; give a longer bound"
  ${ZOO_DECODE} --hw a100-sxm4-80gb --max-batch --max-latency "1 us")
set_tests_properties(cli.error.max_batch_latency_unmet PROPERTIES
  FIXTURES_REQUIRED zoo_decode)
perfc_expect_error(max_batch_latency_zero
  "--max-latency must be a positive time \\(e.g. '50 ms'\\)"
  ${ZOO_DECODE} --hw a100-sxm4-80gb --max-batch --max-latency "0 us")
set_tests_properties(cli.error.max_batch_latency_zero PROPERTIES
  FIXTURES_REQUIRED zoo_decode)
# --plan --max-batch: every layout at its own largest batch, ranked by
# samples/s per device; with a bound, the layouts that serve no batch
# within it are listed with their smallest batch's time.
add_test(NAME cli.serving_plan_max_batch
         COMMAND $<TARGET_FILE:perfc> ${ZOO_DECODE} --hw dgx-a100 --plan
                 --max-batch --ops 0)
set_tests_properties(cli.serving_plan_max_batch PROPERTIES
  FIXTURES_REQUIRED zoo_decode
  PASS_REGULAR_EXPRESSION "--max-batch: predicted at batch 163810, the largest that fits .*\nserving   plan: whole on 1 x a100-sxm4-80gb, the layout with the most samples/s per device, each at its largest batch that fits \\(8 of 8 serve a batch, up to 8 devices\\)\n +layout +devices +batch +latency .*\n +\\* whole +1 +163810 +[0-9.]+ ms .*\n +tp 2 +2 +326375 .*\n +tp 4 +4 +640781 [^\n]*\n +pp 2 +2 +163505 [^\n]*\n +pp 4 +4 +163512 [^\n]*\n +tp 2 pp 2 +4 +325124 [^\n]*\n +tp 2 pp 4 +8 +325131 [^\n]*\n +tp 4 pp 2 +8 +635937 ")
add_test(NAME cli.serving_plan_max_batch_latency
         COMMAND $<TARGET_FILE:perfc> ${ZOO_DECODE} --hw dgx-a100 --plan
                 --max-batch --max-latency "250 us" --ops 0)
set_tests_properties(cli.serving_plan_max_batch_latency PROPERTIES
  FIXTURES_REQUIRED zoo_decode
  PASS_REGULAR_EXPRESSION "each at its largest batch that fits and takes at most 250.00 us \\(3 of 8 serve a batch, up to 8 devices\\)\n.*\n +\\* whole +1 +[0-9]+ +2[0-9][0-9]\\.[0-9]+ us .*\n +tp 2 +2 +- +- +- +- +- +326375  no\n.*\n +pp 2 +2 +22 +2[0-9][0-9]\\.[0-9]+ us [^\n]*\n[^\n]*\n[^\n]*\n[^\n]*\n[^\n]*\n +no batch: tp 2: 1 takes 311.6 us\n +no batch: tp 4: 1 takes 328.8 us\n +no batch: tp 2 pp 2: 1 takes 317 us\n")
add_test(NAME cli.serving_plan_max_batch_json
         COMMAND $<TARGET_FILE:perfc> ${ZOO_DECODE} --hw dgx-a100 --plan
                 --max-batch --max-latency "250 us" --format json --ops 0)
set_tests_properties(cli.serving_plan_max_batch_json PROPERTIES
  FIXTURES_REQUIRED zoo_decode
  PASS_REGULAR_EXPRESSION "\"candidates\": \\[[ \n]+{[ \n]+\"split\": \"whole\",[ \n]+\"devices\": 1,[ \n]+\"pp\": 1,[ \n]+\"latency_s\": [0-9.e-]+,[ \n]+\"interval_s\": [0-9.e-]+,[ \n]+\"samples\": [0-9]+,[ \n]+\"at_max_batch\": true,.*\"at_max_batch\": true,[ \n]+\"not_served\": \\[[ \n]+\"tp 2: 1 takes 311.6 us\",[ \n]+\"tp 4: 1 takes 328.8 us\",[ \n]+\"tp 2 pp 2: 1 takes 317 us\",[ \n]+\"tp 2 pp 4: 1 takes 328 us\",[ \n]+\"tp 4 pp 2: 1 takes 334.3 us\"[ \n]+\\]")
perfc_expect_error(serving_plan_max_batch_unmet
  "zoo_decode.onnx: --max-batch: no layout serves one sample within --max-latency 1 us \\(whole: 1 takes [0-9.]+ us\; tp 2: 1 takes [0-9.]+ us\; tp 4: 1 takes [0-9.]+ us\; pp 2: 1 takes [0-9.]+ us\; pp 4: .*\; tp 4 pp 2: 1 takes [0-9.]+ us\\)\; use devices with more memory"
  ${ZOO_DECODE} --hw dgx-a100 --plan --max-batch --max-latency "1 us")
set_tests_properties(cli.error.serving_plan_max_batch_unmet PROPERTIES
  FIXTURES_REQUIRED zoo_decode)
# --explain names the cache a cache-append kernel writes into in place.
add_test(NAME cli.zoo_decode_explain
         COMMAND $<TARGET_FILE:perfc> ${ZOO_DECODE} --hw a100-sxm4-80gb
                 --explain --ops 0)
set_tests_properties(cli.zoo_decode_explain PROPERTIES
  FIXTURES_REQUIRED zoo_decode
  PASS_REGULAR_EXPRESSION "appends its new rows to the cache 'past\\.0\\.key' in place")
# Inference split over tensor-parallel ranks (--tp without --train): one
# rank's kernels, two all-reduces per layer and the embedding's, the logits
# gathered, and each rank's memory.
add_test(NAME cli.tp_inference
         COMMAND $<TARGET_FILE:perfc> ${ZOO_DECODE} --hw dgx-a100 --tp 2)
set_tests_properties(cli.tp_inference PROPERTIES
  FIXTURES_REQUIRED zoo_decode
  PASS_REGULAR_EXPRESSION "tp        2 ranks over nvswitch-gen2: kernels [0-9.]+ us \\+ 9 all-reduces and 1 all-gather [0-9.]+ us \\(per rank\; latency includes them\\)\nmemory    [0-9.]+ MB at peak per rank")
add_test(NAME cli.tp_inference_json
         COMMAND $<TARGET_FILE:perfc> ${ZOO_DECODE} --hw dgx-a100 --tp 4
                 --format json)
set_tests_properties(cli.tp_inference_json PROPERTIES
  FIXTURES_REQUIRED zoo_decode
  PASS_REGULAR_EXPRESSION "\"per_rank\": true[ \n]+},[ \n]+\"tensor_parallel\": {[ \n]+\"degree\": 4,[ \n]+\"link\": \"nvswitch-gen2\",[ \n]+\"all_reduces\": 9,[ \n]+\"all_reduce_bytes\": [0-9]+,[ \n]+\"all_gathers\": 1,.*\"tp_comm_s\"")
perfc_expect_error(tp_inference_needs_hw
  "--tp needs --hw naming a cluster whose devices the model is split over"
  ${ZOO}/gpt2_small.onnx --tp 2)
perfc_expect_error(tp_inference_one_device
  "--tp 2 splits the model over 2 devices, but 'a100-sxm4-80gb' has 1: give a cluster with at least 2"
  ${ZOO}/gpt2_small.onnx --dim seq=16 --hw a100-sxm4-80gb --tp 2)
perfc_expect_error(tp_inference_no_pattern
  "resnet18.onnx: --tp 2: the model has no Megatron tensor-parallel pattern"
  ${ZOO}/resnet18.onnx --hw dgx-a100 --tp 2)
perfc_expect_error(tp_inference_heads
  "gpt2_small.onnx: --tp 8 does not divide the 12 heads"
  ${ZOO}/gpt2_small.onnx --dim seq=16 --hw dgx-a100 --tp 8)
perfc_expect_error(tp_inference_soc
  "--tp 2: the ranks of a split are devices of one kind, but 'jetson-agx-orin' has 1 jetson-agx-orin-cpu before its jetson-agx-orin-gpu; to spread a model over a SoC's processors use --place"
  ${ZOO}/gpt2_small.onnx --dim seq=16 --hw jetson-agx-orin --tp 2)
perfc_expect_error(tp_inference_place
  "--place and --tp: .* give one"
  ${ZOO}/gpt2_small.onnx --hw jetson-agx-orin --place --tp 2)
# Inference over pipeline stages (--pp without --train): each stage's
# blocks, kernels, send and memory; the latency one batch's pass.
add_test(NAME cli.pp_inference
         COMMAND $<TARGET_FILE:perfc> ${ZOO_DECODE} --hw dgx-a100 --pp 2)
set_tests_properties(cli.pp_inference PROPERTIES
  FIXTURES_REQUIRED zoo_decode
  PASS_REGULAR_EXPRESSION "pp        2 stages of 1 device, 2 batches in flight: a step every [0-9.]+ us \\(the slowest stage\\), [0-9.]+ samples/s\; latency is one batch's pass\n  stage 1   blocks 1-2 \\(/layers.0 to /layers.1\\): [0-9]+ kernels [0-9.]+ us \\+ send [0-9.]+ KB over nvswitch-gen2 [0-9.]+ us, [0-9.]+ MB fits\n  stage 2   blocks 3-4 \\(/layers.2 to /layers.3\\): [0-9]+ kernels [0-9.]+ us, [0-9.]+ MB fits\nmemory    [0-9.]+ MB at peak per rank of the fullest stage")
add_test(NAME cli.pp_inference_json
         COMMAND $<TARGET_FILE:perfc> ${ZOO_DECODE} --hw dgx-a100 --tp 2
                 --pp 2 --format json)
set_tests_properties(cli.pp_inference_json PROPERTIES
  FIXTURES_REQUIRED zoo_decode
  PASS_REGULAR_EXPRESSION "\"per_rank\": true,[ \n]+\"stage\": [12][ \n]+},[ \n]+\"pipeline_parallel\": {[ \n]+\"degree\": 2,[ \n]+\"in_flight_batches\": 2,[ \n]+\"latency_s\": [0-9.e-]+,[ \n]+\"interval_s\": [0-9.e-]+,[ \n]+\"samples_per_s\": [0-9.e+]+,[ \n]+\"stages\": \\[[ \n]+{[ \n]+\"first_block\": 1,[ \n]+\"last_block\": 2,[ \n]+\"first_block_name\": \"/layers.0\",[ \n]+\"last_block_name\": \"/layers.1\",[ \n]+\"kernels\": [0-9]+,[ \n]+\"kernels_s\": [0-9.e-]+,[ \n]+\"send_bytes\": [0-9]+,[ \n]+\"send_s\": [0-9.e-]+,[ \n]+\"send_link\": \"nvswitch-gen2\",[ \n]+\"time_s\": [0-9.e-]+,[ \n]+\"peak_bytes\": [0-9]+,.*\"in_flight_inputs_bytes\": [0-9]+,[ \n]+\"received_bytes\": 0,.*\"tensor_parallel\": {[ \n]+\"degree\": 2,.*\"tp_comm_s\": [0-9.e-]+,[ \n]+\"stage\": 1,.*\"stage\": 2,")
add_test(NAME cli.pp_inference_trace
         COMMAND sh -c "$<TARGET_FILE:perfc> ${ZOO_DECODE} --hw dgx-a100 --pp 2 --trace ${CMAKE_CURRENT_BINARY_DIR}/pp_inference_trace.json >/dev/null && cat ${CMAKE_CURRENT_BINARY_DIR}/pp_inference_trace.json")
set_tests_properties(cli.pp_inference_trace PROPERTIES
  FIXTURES_REQUIRED zoo_decode
  PASS_REGULAR_EXPRESSION "\"name\": \"process_name\",[ \n]+\"ph\": \"M\",[ \n]+\"pid\": 0,[ \n]+\"tid\": 0,[ \n]+\"args\": {[ \n]+\"name\": \"stage 1 \\(a100-sxm4-80gb\\)\".*\"pid\": 1,[ \n]+\"tid\": 0,[ \n]+\"args\": {[ \n]+\"name\": \"stage 2 \\(a100-sxm4-80gb\\)\".*\"name\": \"send to stage 2\",[ \n]+\"cat\": \"pipeline\",[ \n]+\"ph\": \"X\",[ \n]+\"pid\": 0,[ \n]+\"tid\": 1,")
perfc_expect_error(pp_inference_zero
  "--pp 0: give the number of pipeline stages, 1 or more"
  ${ZOO}/gpt2_small.onnx --hw dgx-a100 --pp 0)
perfc_expect_error(pp_inference_needs_hw
  "--pp needs --hw naming a cluster whose devices hold the stages"
  ${ZOO}/gpt2_small.onnx --pp 2)
perfc_expect_error(pp_inference_devices
  "--pp 4 with --tp 4 runs 4 stages of 4 devices \\(16 in all\\), but 'dgx-a100' has 8: give a cluster with more"
  ${ZOO}/gpt2_small.onnx --dim seq=16 --hw dgx-a100 --tp 4 --pp 4)
perfc_expect_error(pp_inference_blocks
  "gpt2_small.onnx: --pp 16: the model has 12 blocks \\(layers\\), and each stage holds at least one\; give --pp at most 12"
  ${ZOO}/gpt2_small.onnx --dim seq=16 --hw dgx-h100-superpod --pp 16)
perfc_expect_error(pp_inference_soc
  "--pp 2: the stages' devices are of one kind, but 'jetson-agx-orin' has 1 jetson-agx-orin-cpu before other devices"
  ${ZOO}/gpt2_small.onnx --dim seq=16 --hw jetson-agx-orin --pp 2)
perfc_expect_error(pp_inference_ep
  "--pp and --ep: pipeline stages of an expert-parallel group are not modelled for inference"
  ${ZOO}/gpt2_small.onnx --hw dgx-a100 --pp 2 --ep 2)
perfc_expect_error(serving_plan_with_pp
  "--plan without --train chooses the layout \\(whole, --tp, --pp or --ep\\)\; drop --pp"
  ${ZOO}/gpt2_small.onnx --dim seq=16 --hw dgx-a100 --plan --pp 2)
# A serving plan tries stages where a layout does not fit: under the
# throughput objective four single-device stages serve more per device
# than tp 2 or tp 4, which pay their all-reduces.
add_test(NAME cli.serving_plan_stages
         COMMAND $<TARGET_FILE:perfc> ${ZOO}/gpt2_small.onnx --dim seq=128
                 --hw dgx-a100 --plan --memory-reserve "79.7 GiB"
                 --objective throughput)
set_tests_properties(cli.serving_plan_stages PROPERTIES PASS_REGULAR_EXPRESSION
  "serving   plan: pp 4 on 4 x a100-sxm4-80gb, the layout with the most samples/s per device that fits \\(3 of 5 fit, up to 8 devices\\)\n +layout +devices +latency +samples/s +per device +memory/device +max batch +fits\n +whole +1 .* 0  no\n.*  pp 2 +2 .* 0  no\n.*\\* pp 4 +4 .* 2  yes")
set(ZOO_ARGS --hidden 768 --seq 128 --vocab 30522 -o ${CMAKE_CURRENT_BINARY_DIR}/zoo_bad.onnx)
perfc_expect_error(zoo_heads "zoo: --heads 7 does not divide --hidden 768"
                   zoo gpt --layers 12 --heads 7 ${ZOO_ARGS})
perfc_expect_error(zoo_zero_layers "zoo: --layers 0: a model needs at least one layer"
                   zoo gpt --layers 0 --heads 12 ${ZOO_ARGS})
perfc_expect_error(zoo_kv_heads "zoo: --kv-heads 5 does not divide --heads 12"
                   zoo llama --layers 2 --heads 12 --kv-heads 5 ${ZOO_ARGS})
perfc_expect_error(zoo_unknown_family "zoo: unknown family or model 'gpt5': use gpt, bert, llama or one of gpt2, gpt3-175b, .*, deepseek-v3"
                   zoo gpt5 --layers 2 --heads 12 ${ZOO_ARGS})
perfc_expect_error(zoo_no_family "zoo: expected a family" zoo)
# Published models by name: their shapes, the workload given.
add_test(NAME cli.zoo_list COMMAND $<TARGET_FILE:perfc> zoo list)
set_tests_properties(cli.zoo_list PROPERTIES PASS_REGULAR_EXPRESSION
  "llama-3-70b +meta-llama/Meta-Llama-3-70B config.json.*deepseek-v3 +deepseek-ai/DeepSeek-V3 config.json")
add_test(NAME cli.zoo_preset
         COMMAND $<TARGET_FILE:perfc> zoo mixtral-8x7b --layers 2 --seq 1
                 --past 2047 --batch 8 --dtype bf16
                 -o ${CMAKE_CURRENT_BINARY_DIR}/zoo_preset.onnx)
set_tests_properties(cli.zoo_preset PROPERTIES PASS_REGULAR_EXPRESSION
  "zoo_preset.onnx: mixtral-8x7b \\(llama\\), 2 layers, hidden 4096, 32 heads \\(8 kv\\), ffn 14336\; 8 experts \\(top-2\; 8 tokens reach 7, 3 rows each, 5 padded\\)")
perfc_expect_error(zoo_preset_missing_seq "zoo: missing --seq"
  zoo llama-3-8b -o ${CMAKE_CURRENT_BINARY_DIR}/never.onnx)
perfc_expect_error(zoo_missing "zoo: missing --heads, --seq, --vocab"
                   zoo bert --layers 2 --hidden 64)
perfc_expect_error(zoo_bad_integer "zoo: --layers 'x': expected an integer"
                   zoo gpt --layers x --heads 12 ${ZOO_ARGS})
perfc_expect_error(zoo_no_output "zoo: no output file: give -o FILE.onnx"
                   zoo gpt --layers 2 --hidden 64 --heads 4 --seq 8 --vocab 10)
perfc_expect_error(zoo_bad_head "zoo: unknown --head 'mlm': use pooler, pretraining or squad"
                   zoo bert --layers 2 --heads 12 --head mlm ${ZOO_ARGS})
perfc_expect_error(zoo_head_not_bert "zoo: --head squad is for bert"
                   zoo gpt --layers 2 --heads 12 --head squad ${ZOO_ARGS})
add_test(NAME cli.zoo_bert_pretraining
         COMMAND $<TARGET_FILE:perfc> zoo bert --layers 24 --hidden 1024
                 --heads 16 --seq 128 --vocab 30522 --head pretraining
                 -o ${CMAKE_CURRENT_BINARY_DIR}/zoo_bert_pretraining.onnx)
set_tests_properties(cli.zoo_bert_pretraining PROPERTIES
  PASS_REGULAR_EXPRESSION "bert, 24 layers.*: 336,226,108 parameters")

# Training: the documented step and memory fields, the trace, and errors.
add_test(NAME cli.train_json
         COMMAND $<TARGET_FILE:perfc> ${ZOO}/gpt2_small.onnx --dim seq=1024
                 --hw dgx-a100 --train --dp 8 --micro-batch 4 --global-batch 64
                 --dtype bf16 --zero 1 --format json)
set_tests_properties(cli.train_json PROPERTIES PASS_REGULAR_EXPRESSION
  "\"strategy\": {.*\"dp\": 8.*\"step\": {.*\"time_s\": [0-9.e-]+,.*\"compute_s\".*\"comm_s\".*\"exposed_comm_s\".*\"bubble_s\".*\"samples_per_s\".*\"tflops_per_device\".*\"memory\": {.*\"peak_bytes\".*\"weights_bytes\".*\"gradients_bytes\".*\"optimizer_bytes\".*\"activations_bytes\"")
add_test(NAME cli.train_trace
         COMMAND $<TARGET_FILE:perfc> ${ZOO}/gpt2_small.onnx --dim seq=1024
                 --hw dgx-a100 --train --pp 4 --micro-batch 1 --global-batch 8
                 --dtype bf16 --trace ${CMAKE_CURRENT_BINARY_DIR}/train_trace.json)
perfc_expect_error(train_needs_hw "--train needs --hw"
                   ${ZOO}/resnet18.onnx --train)
perfc_expect_error(train_options_need_train "training options .* need --train"
                   ${ZOO}/resnet18.onnx --hw t4 --dp 2)
perfc_expect_error(train_too_many_devices
  "resnet18.onnx: dp 16 x tp 1 x pp 1 = 16 devices, but cluster 'dgx-a100' has 8"
  ${ZOO}/resnet18.onnx --hw dgx-a100 --train --dp 16)
perfc_expect_error(train_no_tp_pattern
  "resnet18.onnx: --tp 2: the model has no Megatron tensor-parallel pattern"
  ${ZOO}/resnet18.onnx --hw dgx-a100 --train --tp 2)
perfc_expect_error(train_bad_recompute "unknown --recompute 'some'"
  ${ZOO}/resnet18.onnx --hw dgx-a100 --train --recompute some)

# perfc calibrate: a quick run writes a description that --hw loads.
add_test(NAME cli.calibrate_quick
         COMMAND sh -c "$<TARGET_FILE:perfc> calibrate --quick --silent --out ${CMAKE_CURRENT_BINARY_DIR}/cli-calibrated.yaml && $<TARGET_FILE:perfc> ${ZOO}/resnet18.onnx --hw ${CMAKE_CURRENT_BINARY_DIR}/cli-calibrated.yaml")
set_tests_properties(cli.calibrate_quick PROPERTIES
  PASS_REGULAR_EXPRESSION "latency +[0-9.]+ m?s" RUN_SERIAL ${PERFC_TIMES_CPU}
  TIMEOUT 120)
perfc_expect_error(calibrate_zero_threads "calibrate: --threads must be at least 1"
                   calibrate --threads 0)
# --rounds: two rounds of the quick set, and the description carries the
# CPU runtime's convolution keys (hw show prints them).
add_test(NAME cli.calibrate_rounds_conv_keys
         COMMAND sh -c "$<TARGET_FILE:perfc> calibrate --quick --rounds 2 --silent --out ${CMAKE_CURRENT_BINARY_DIR}/cli-calibrated-rounds.yaml && $<TARGET_FILE:perfc> hw show ${CMAKE_CURRENT_BINARY_DIR}/cli-calibrated-rounds.yaml")
# ONNX Runtime's NCHWc blocks exist on x86-64 only (calibrate's ortNchwcBlock).
if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
  set(perfc_conv_keys_regex "conv: direct kernels in (8|16)-channel blocks.*conv: kernels apply Relu")
else()
  set(perfc_conv_keys_regex "conv: kernels apply Relu")
endif()
set_tests_properties(cli.calibrate_rounds_conv_keys PROPERTIES
  PASS_REGULAR_EXPRESSION "${perfc_conv_keys_regex}"
  RUN_SERIAL ${PERFC_TIMES_CPU} TIMEOUT 120)
perfc_expect_error(train_bad_compression "--grad-compression topk:R: R must be a share in \\(0, 1\\]"
  ${ZOO}/resnet18.onnx --hw dgx-a100 --train --dp 8 --grad-compression topk:2)

# The planner (--plan): the documented plan fields, top K and the Pareto
# front, a plan fed back with --strategy, and errors naming the constraint.
set(PLAN_OUT ${CMAKE_CURRENT_BINARY_DIR}/cli-plan.json)
set(PLAN_ARGS ${ZOO}/gpt2_small.onnx --dim seq=1024 --hw dgx-a100 --train
              --global-batch 64 --dtype bf16)
add_test(NAME cli.plan_json
         COMMAND $<TARGET_FILE:perfc> ${PLAN_ARGS} --plan --format json -o ${PLAN_OUT})
set_tests_properties(cli.plan_json PROPERTIES FIXTURES_SETUP plan_json)
add_test(NAME cli.plan_json_fields COMMAND ${CMAKE_COMMAND} -E cat ${PLAN_OUT})
set_tests_properties(cli.plan_json_fields PROPERTIES FIXTURES_REQUIRED plan_json
  PASS_REGULAR_EXPRESSION "\"plan\": {[^}]*\"dp\": [0-9]+,[^}]*\"tp\": [0-9]+,[^}]*\"pp\": [0-9]+,[^}]*\"vp\": [0-9]+,[^}]*\"sp\": (true|false),[^}]*\"micro_batch\": [0-9]+,[^}]*\"recompute\": \"[a-z]+\",[^}]*\"zero\": [0-3],.*\"stages\": \\[.*\"devices\": [0-9]+,.*\"layers\": \\[.*\"memory_bytes\".*\"time_s\".*\"placement\": \\[.*\"predicted\": {[^}]*\"step_time_s\"[^}]*\"peak_bytes\".*\"optimal\": true,.*\"search\": {.*\"candidates\": [0-9]+.*\"timed_out\": false")
# Deterministic: the same inputs give the same bytes out, so the search's
# own run times appear only with --timings (a plan and a placement, each
# run twice and compared byte for byte).
set_tests_properties(cli.plan_json_fields PROPERTIES FAIL_REGULAR_EXPRESSION
  "solve_s|evaluate_s|candidates_per_s")
add_test(NAME cli.plan_place_same_bytes
         COMMAND sh -c "for i in 1 2; do $<TARGET_FILE:perfc> ${ZOO}/gpt2_small.onnx --dim seq=1024 --hw dgx-a100 --train --dtype bf16 --plan --global-batch 64 --top 3 --format json -o ${CMAKE_CURRENT_BINARY_DIR}/same-plan-$i.json && $<TARGET_FILE:perfc> ${ZOO}/mobilenet_v2.onnx --hw jetson-agx-orin --place --compute-type fp16 > ${CMAKE_CURRENT_BINARY_DIR}/same-place-$i.txt || exit 1; done; cmp ${CMAKE_CURRENT_BINARY_DIR}/same-plan-1.json ${CMAKE_CURRENT_BINARY_DIR}/same-plan-2.json && cmp ${CMAKE_CURRENT_BINARY_DIR}/same-place-1.txt ${CMAKE_CURRENT_BINARY_DIR}/same-place-2.txt && echo same")
set_tests_properties(cli.plan_place_same_bytes PROPERTIES PASS_REGULAR_EXPRESSION "^same\n$")
add_test(NAME cli.plan_timings
         COMMAND $<TARGET_FILE:perfc> ${PLAN_ARGS} --plan --timings --format json)
set_tests_properties(cli.plan_timings PROPERTIES PASS_REGULAR_EXPRESSION
  "\"search\": {.*\"evaluate_s\": [0-9.e-]+,.*\"solve_s\": [0-9.e-]+,.*\"candidates_per_s\": [0-9.e+-]+,")
# The per-node report is at the micro-batch the plan chose (8 here), not
# the one the model was imported at (1).
add_test(NAME cli.plan_report_micro_batch COMMAND ${CMAKE_COMMAND} -E cat ${PLAN_OUT})
set_tests_properties(cli.plan_report_micro_batch PROPERTIES FIXTURES_REQUIRED plan_json
  PASS_REGULAR_EXPRESSION "\"shape\": \"\\[8, 1024\\]\".*\"bindings\": {[^}]*\"batch\": 8,.*\"strategy\": {[^}]*\"micro_batch\": 8,")
add_test(NAME cli.plan_strategy_roundtrip
         COMMAND $<TARGET_FILE:perfc> ${PLAN_ARGS} --strategy ${PLAN_OUT} --format json)
set_tests_properties(cli.plan_strategy_roundtrip PROPERTIES FIXTURES_REQUIRED plan_json
  PASS_REGULAR_EXPRESSION "\"strategy\": {.*\"step\": {")
# A strategy flag beside --strategy must agree with the plan (the plan
# chose micro-batch 8): a different value is an error, not overridden
# silently; the same value is accepted.
perfc_expect_error(plan_strategy_flag_disagrees
  "--micro-batch and --strategy disagree: the plan in .*cli-plan.json has --micro-batch 8, the command line --micro-batch 3\\; drop --micro-batch \\(or --strategy\\)"
  ${PLAN_ARGS} --strategy ${PLAN_OUT} --micro-batch 3)
set_tests_properties(cli.error.plan_strategy_flag_disagrees PROPERTIES FIXTURES_REQUIRED plan_json)
add_test(NAME cli.plan_strategy_flag_agrees
         COMMAND $<TARGET_FILE:perfc> ${PLAN_ARGS} --strategy ${PLAN_OUT} --micro-batch 8 --format json --ops 0)
set_tests_properties(cli.plan_strategy_flag_agrees PROPERTIES FIXTURES_REQUIRED plan_json
  PASS_REGULAR_EXPRESSION "\"strategy\": {[^}]*\"micro_batch\": 8,")
# A plan made for FlashAttention says so, and --strategy predicts it so
# without the flag.
set(PLAN_FLASH_OUT ${CMAKE_CURRENT_BINARY_DIR}/cli-plan-flash.json)
add_test(NAME cli.plan_flash_json
         COMMAND $<TARGET_FILE:perfc> ${PLAN_ARGS} --plan --flash-attention
                 --format json -o ${PLAN_FLASH_OUT})
set_tests_properties(cli.plan_flash_json PROPERTIES FIXTURES_SETUP plan_flash_json)
add_test(NAME cli.plan_flash_strategy
         COMMAND $<TARGET_FILE:perfc> ${PLAN_ARGS} --strategy ${PLAN_FLASH_OUT} --format json)
set_tests_properties(cli.plan_flash_strategy PROPERTIES FIXTURES_REQUIRED plan_flash_json
  PASS_REGULAR_EXPRESSION "\"strategy\": {[^}]*\"flash_attention\": true,")
add_test(NAME cli.plan_top_pareto
         COMMAND $<TARGET_FILE:perfc> ${PLAN_ARGS} --plan --planner exhaustive
                 --top 3 --pareto --format json)
set_tests_properties(cli.plan_top_pareto PROPERTIES PASS_REGULAR_EXPRESSION
  "\"planner\": \"exhaustive\".*\"plans\": \\[.*\"step_time_s\".*\"pareto\": \\[")
add_test(NAME cli.plan_table COMMAND $<TARGET_FILE:perfc> ${PLAN_ARGS} --plan --tp 2)
set_tests_properties(cli.plan_table PROPERTIES PASS_REGULAR_EXPRESSION
  "training  dp [0-9]+ x tp 2 .*plan      proven optimal by z3: [0-9]+ candidates")
perfc_expect_error(plan_too_many_devices
  "gpt2_small.onnx: --devices 16: cluster 'dgx-a100' has 8 devices"
  ${PLAN_ARGS} --plan --devices 16)
perfc_expect_error(plan_bad_tp
  "--tp 3: tensor parallelism must be a power of two dividing the 8 devices of a node"
  ${PLAN_ARGS} --plan --tp 3)
# A model whose node names number no layers (DenseNet's denselayer1) is cut
# by structure: 9 blocks (stem, dense blocks, transitions, classifier), so
# three pipeline stages each get whole blocks.
add_test(NAME cli.train_pp_structural_blocks
         COMMAND $<TARGET_FILE:perfc> ${ZOO}/densenet121.onnx --hw dgx-a100
                 --train --pp 3
                 --micro-batch 4 --global-batch 32 --format json)
set_tests_properties(cli.train_pp_structural_blocks PROPERTIES
  PASS_REGULAR_EXPRESSION "\"blocks\": 9,[^\"]*\"blocks_from\": \"structure\".*\"stage\": 0,.*\"blocks\": [1-7],.*\"stage\": 1,.*\"blocks\": [1-7],.*\"stage\": 2,.*\"blocks\": [1-7],")
perfc_expect_error(plan_pp_over_blocks
  "--pp 16: the model has 12 blocks, and a pipeline stage needs at least one"
  ${PLAN_ARGS} --plan --pp 16)
perfc_expect_error(plan_fits_nowhere
  "no strategy fits in 40 GiB per device: the smallest needs [0-9.]+ GiB \\(dp 1, tp 1, pp 1"
  ${ZOO_OUT} --hw a100-sxm4-40gb --train --plan --global-batch 8 --dtype bf16 --micro-batch 1)
set_tests_properties(cli.error.plan_fits_nowhere PROPERTIES FIXTURES_REQUIRED zoo_llama)
# Mixed GPU types: each stage on one type, named in the plan; --train on a
# mixed cluster without --plan is refused (which type would it run on?).
set(MIXED_HW ${PROJECT_SOURCE_DIR}/tests/data/hwdb/mixed-a100-v100.yaml)
add_test(NAME cli.plan_mixed_gpus
         COMMAND $<TARGET_FILE:perfc> ${ZOO}/gpt2_small.onnx --dim seq=1024
                 --hw ${MIXED_HW} --train --global-batch 256 --dtype fp16
                 --plan --pp 2 --format json)
# Both types among plan.stages (the only stages with "devices" before
# "device"), in either order.
set_tests_properties(cli.plan_mixed_gpus PROPERTIES PASS_REGULAR_EXPRESSION
  "\"devices\": [0-9]+,[^\"]*\"device\": \"v100-sxm2-32gb\".*\"devices\": [0-9]+,[^\"]*\"device\": \"a100-sxm4-80gb\"|\"devices\": [0-9]+,[^\"]*\"device\": \"a100-sxm4-80gb\".*\"devices\": [0-9]+,[^\"]*\"device\": \"v100-sxm2-32gb\"")
# A mixed plan fed back with --strategy: predicted again stage by stage.
set(MIXED_PLAN_OUT ${CMAKE_CURRENT_BINARY_DIR}/cli-plan-mixed.json)
add_test(NAME cli.plan_mixed_json
         COMMAND $<TARGET_FILE:perfc> ${ZOO}/gpt2_small.onnx --dim seq=1024
                 --hw ${MIXED_HW} --train --global-batch 256 --dtype fp16
                 --plan --pp 2 --format json -o ${MIXED_PLAN_OUT})
set_tests_properties(cli.plan_mixed_json PROPERTIES FIXTURES_SETUP plan_mixed)
add_test(NAME cli.plan_mixed_strategy
         COMMAND $<TARGET_FILE:perfc> ${ZOO}/gpt2_small.onnx --dim seq=1024
                 --hw ${MIXED_HW} --train --global-batch 256 --dtype fp16
                 --strategy ${MIXED_PLAN_OUT} --format json)
# Both types among its stages, in the order the plan chose.
set_tests_properties(cli.plan_mixed_strategy PROPERTIES
  FIXTURES_REQUIRED plan_mixed PASS_REGULAR_EXPRESSION
  "\"stages\": \\[.*\"device\": \"v100-sxm2-32gb\".*\"device\": \"a100-sxm4-80gb\"|\"stages\": \\[.*\"device\": \"a100-sxm4-80gb\".*\"device\": \"v100-sxm2-32gb\"")
# Unpinned, GPT-2 small (one GPU holds it) is best as an uneven data split
# over both types (pp 1): each type's replicas and micro-batches in
# plan.data_split, the faster type taking more; fed back with --strategy.
add_test(NAME cli.plan_data_split
         COMMAND $<TARGET_FILE:perfc> ${ZOO}/gpt2_small.onnx --dim seq=1024
                 --hw ${MIXED_HW} --train --global-batch 256 --dtype fp16
                 --plan --format json)
set_tests_properties(cli.plan_data_split PROPERTIES PASS_REGULAR_EXPRESSION
  "\"pp\": 1,.*\"data_split\": \\[[^]]*\"device\": \"a100-sxm4-80gb\",[^]]*\"replicas\": 16,[^]]*\"device\": \"v100-sxm2-32gb\",[^]]*\"replicas\": 16,")
set(SPLIT_PLAN_OUT ${CMAKE_CURRENT_BINARY_DIR}/cli-plan-split.json)
add_test(NAME cli.plan_data_split_json
         COMMAND $<TARGET_FILE:perfc> ${ZOO}/gpt2_small.onnx --dim seq=1024
                 --hw ${MIXED_HW} --train --global-batch 256 --dtype fp16
                 --plan --format json -o ${SPLIT_PLAN_OUT})
set_tests_properties(cli.plan_data_split_json PROPERTIES FIXTURES_SETUP plan_split)
add_test(NAME cli.plan_data_split_strategy
         COMMAND $<TARGET_FILE:perfc> ${ZOO}/gpt2_small.onnx --dim seq=1024
                 --hw ${MIXED_HW} --train --global-batch 256 --dtype fp16
                 --strategy ${SPLIT_PLAN_OUT})
set_tests_properties(cli.plan_data_split_strategy PROPERTIES
  FIXTURES_REQUIRED plan_split PASS_REGULAR_EXPRESSION
  "data      a100-sxm4-80gb x 16 replicas, [0-9]+ micro-batches each \\([0-9]+ samples\\): step [0-9.]+ ms.*v100-sxm2-32gb x 16 replicas, [0-9]+ micro-batches each")
perfc_expect_error(plan_data_split_sum
  "data_split_sum.json: the plan does not apply to .*gpt2_small.onnx: data split: its replicas sum to 20, but dp is 32$"
  ${ZOO}/gpt2_small.onnx --dim seq=1024 --hw ${MIXED_HW} --train
  --strategy ${BAD}/plan/data_split_sum.json)
perfc_expect_error(plan_data_split_batch
  "data_split_batch.json: 'plan.data_split\\[1\\].batch_per_replica' is not micro_batches x micro_batch = 4$"
  ${ZOO}/gpt2_small.onnx --dim seq=1024 --hw ${MIXED_HW} --train
  --strategy ${BAD}/plan/data_split_batch.json)
perfc_expect_error(train_mixed_without_plan
  "cluster 'mixed-a100-v100' mixes GPU types; plan it with --plan"
  ${ZOO}/gpt2_small.onnx --dim seq=1024 --hw ${MIXED_HW} --train --dp 32
  --global-batch 64 --dtype fp16)
perfc_expect_error(plan_mixed_vp
  "--vp 2: interleaving is not modelled on mixed GPU types"
  ${ZOO}/gpt2_small.onnx --dim seq=1024 --hw ${MIXED_HW} --train --plan
  --global-batch 64 --dtype fp16 --vp 2)
perfc_expect_error(plan_needs_global_batch "--plan needs --global-batch"
  ${ZOO}/gpt2_small.onnx --dim seq=1024 --hw dgx-a100 --train --plan)
perfc_expect_error(strategy_needs_train "--strategy needs --train: a plan file holds a training strategy"
  ${ZOO}/gpt2_small.onnx --dim seq=128 --hw dgx-a100 --strategy ${PLAN_OUT})
# Without --train, --plan chooses how to serve: every layout (whole, --tp,
# --ep) up to a node, the fastest that fits predicted in full.
add_test(NAME cli.serving_plan_table
         COMMAND $<TARGET_FILE:perfc> ${ZOO}/gpt2_small.onnx --dim seq=128
                 --hw dgx-a100 --plan)
set_tests_properties(cli.serving_plan_table PROPERTIES PASS_REGULAR_EXPRESSION
  "tp        4 ranks over nvswitch-gen2.*serving   plan: tp 4 on 4 x a100-sxm4-80gb, the fastest layout that fits \\(3 of 3 fit, up to 8 devices\\).*  whole +1 .*  tp 2 +2 .*\\* tp 4 +4 .*not tried: --tp 8 does not divide the 12 heads")
add_test(NAME cli.serving_plan_json
         COMMAND $<TARGET_FILE:perfc> ${ZOO}/gpt2_small.onnx --dim seq=128
                 --hw dgx-a100 --plan --devices 2 --format json --ops 0)
set_tests_properties(cli.serving_plan_json PROPERTIES PASS_REGULAR_EXPRESSION
  "\"tensor_parallel\": {[ \n]+\"degree\": 2,.*\"serving_plan\": {[ \n]+\"objective\": \"latency\",[ \n]+\"samples\": 1,[ \n]+\"max_devices\": 2,[ \n]+\"max_pipeline_devices\": 2,[ \n]+\"chosen\": {[ \n]+\"split\": \"tp\",[ \n]+\"devices\": 2,[ \n]+\"pp\": 1[ \n]+},[ \n]+\"candidates\": \\[[ \n]+{[ \n]+\"split\": \"whole\",")
perfc_expect_error(serving_plan_nothing_fits
  "gpt2_small.onnx: no layout of up to 8 devices fits in memory: the least per device is [0-9.]+ MB \\(tp 4 pp 2 on 8 devices\\), over the [0-9.]+ MB a device has"
  ${ZOO}/gpt2_small.onnx --dim seq=128 --hw dgx-a100 --plan --memory-reserve "79.9 GiB")
perfc_expect_error(serving_plan_with_tp
  "--plan without --train chooses the layout \\(whole, --tp, --pp or --ep\\)\; drop --tp, or drop --plan to predict that layout"
  ${ZOO}/gpt2_small.onnx --dim seq=128 --hw dgx-a100 --plan --tp 2)
perfc_expect_error(serving_plan_without_hw
  "--plan without --train chooses how to serve the model over a cluster: add --hw"
  ${ZOO}/gpt2_small.onnx --dim seq=128 --plan)
perfc_expect_error(serving_plan_top
  "--top applies to the training planner's search\; serving plans every layout"
  ${ZOO}/gpt2_small.onnx --dim seq=128 --hw dgx-a100 --plan --top 3)
# --objective throughput: the most samples per device (one device for
# GPT-2 small); --max-latency keeps the layouts within a target.
add_test(NAME cli.serving_plan_throughput
         COMMAND $<TARGET_FILE:perfc> ${ZOO}/gpt2_small.onnx --dim seq=128
                 --hw dgx-a100 --plan --objective throughput --ops 0)
set_tests_properties(cli.serving_plan_throughput PROPERTIES PASS_REGULAR_EXPRESSION
  "serving   plan: whole on 1 x a100-sxm4-80gb, the layout with the most samples/s per device that fits \\(3 of 3 fit, up to 8 devices\\).*\\* whole +1 ")
add_test(NAME cli.serving_plan_max_latency_json
         COMMAND $<TARGET_FILE:perfc> ${ZOO}/gpt2_small.onnx --dim seq=128
                 --hw dgx-a100 --plan --objective throughput --max-latency "3 ms"
                 --format json --ops 0)
set_tests_properties(cli.serving_plan_max_latency_json PROPERTIES PASS_REGULAR_EXPRESSION
  "\"serving_plan\": {[ \n]+\"objective\": \"throughput\",[ \n]+\"max_latency_s\": 0.003[0-9]*,[ \n]+\"samples\": 1,[ \n]+\"max_devices\": 8,[ \n]+\"max_pipeline_devices\": 8,[ \n]+\"chosen\": {[ \n]+\"split\": \"tp\",[ \n]+\"devices\": 2,[ \n]+\"pp\": 1[ \n]+}")
perfc_expect_error(serving_plan_max_latency_unmet
  "gpt2_small.onnx: no layout that fits meets --max-latency 100 us: the fastest, tp 4 on 4 devices, takes [0-9.]+ ms"
  ${ZOO}/gpt2_small.onnx --dim seq=128 --hw dgx-a100 --plan --max-latency "100 us")
perfc_expect_error(serving_plan_max_latency_zero
  "gpt2_small.onnx: --max-latency must be a positive time \\(e.g. '50 ms'\\)"
  ${ZOO}/gpt2_small.onnx --dim seq=128 --hw dgx-a100 --plan --max-latency "0 us")
perfc_expect_error(serving_plan_objective_unknown
  "unknown --objective 'cost': use latency or throughput"
  ${ZOO}/gpt2_small.onnx --dim seq=128 --hw dgx-a100 --plan --objective cost)
perfc_expect_error(serving_plan_objective_without_plan
  "--objective chooses among the layouts of a serving plan: give --plan without --train"
  ${ZOO}/gpt2_small.onnx --dim seq=128 --hw dgx-a100 --objective throughput)
perfc_expect_error(conv_layout "unknown --conv-layout 'hwcn': use native, nchw or nhwc"
  ${ZOO}/resnet18.onnx --hw a100-sxm4-80gb --conv-layout hwcn)
perfc_expect_error(plan_other_model "cli-plan.json: the plan is for model 'gpt2_small' \\(graph 'torch_jit', [0-9]+ nodes, [0-9]+ parameters\\), not model 'resnet18' \\(graph 'torch_jit', [0-9]+ nodes"
  ${ZOO}/resnet18.onnx --hw dgx-a100 --train --strategy ${PLAN_OUT})
set_tests_properties(cli.error.plan_other_model PROPERTIES FIXTURES_REQUIRED plan_json)
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/cli-bad-plan.json "{\"plan\": {\"dp\": 2}}")
perfc_expect_error(plan_bad_file "cli-bad-plan.json: 'plan.tp' is missing or not an integer"
  ${PLAN_ARGS} --strategy ${CMAKE_CURRENT_BINARY_DIR}/cli-bad-plan.json)
# Plan files with one mistake each (tests/data/bad/plan/): the file, the
# place (LINE:COL or the JSON path) and what is wrong.
set(BAD_PLAN ${BAD}/plan)
set(STRATEGY_ARGS ${ZOO}/gpt2_small.onnx --dim seq=1024 --hw dgx-a100 --train)
# Feeds PLAN (under tests/data/bad/plan/ unless absolute) to --strategy on
# gpt2_small; the error must read "PLAN" then REST (REST starts after the
# file name: ": what" or ":LINE:COL: what").
function(perfc_expect_plan_error name plan rest)
  set(path ${BAD_PLAN}/${plan})
  if(IS_ABSOLUTE ${plan})
    set(path ${plan})
  endif()
  perfc_expect_error(${name} "${plan}${rest}"
    ${STRATEGY_ARGS} --strategy ${path})
endfunction()
perfc_expect_plan_error(plan_degree_overflow degree_overflow.json
  ": 'plan.dp' is 1099511627784, above its maximum 1000000$")
perfc_expect_plan_error(plan_impossible_degree too_many_chunks.json
  ": the plan does not apply to .*gpt2_small.onnx: pp 4 x vp 4 = 16 pipeline chunks, but the model has 12 blocks; use fewer stages$")
perfc_expect_plan_error(plan_chunks_wrap chunks_wrap.json
  ": 'plan.vp' is 2147483648, above its maximum 1000000$")
perfc_expect_plan_error(plan_other_model_file other_model.json
  ": the plan is for model 'resnet18' \\(graph 'torch_jit', 69 nodes, 11689512 parameters\\), not model 'gpt2_small' \\(graph 'torch_jit', 1377 nodes, 124439808 parameters\\); plan this model with --plan$")
perfc_expect_plan_error(plan_layers_gap layers_gap.json
  ": 'plan.stages\\[1\\].layers\\[0\\]' starts at layer 7; the chunks must follow each other from layer 0 \\(expected 6\\)$")
perfc_expect_plan_error(plan_flash_attention_word flash_attention_word.json
  ": 'plan.flash_attention' is not true/false$")
perfc_expect_plan_error(plan_not_json not_json.json
  ":4:1: not JSON: Invalid JSON value$")
perfc_expect_plan_error(plan_not_a_file /dev/zero
  ": cannot read the plan: it is not a regular file$")
# --micro-batch past 2^62 (the plan files' bound too) is too large; 2^62
# itself reaches the import, whose input tensor overflows; 2^32 is not cut
# to 32 bits (it once read as 0, "must be positive").
perfc_expect_error(micro_batch_too_large
  "--micro-batch 4611686018427387905 is too large: at most 2\\^62 = 4611686018427387904 samples$"
  ${STRATEGY_ARGS} --micro-batch 4611686018427387905)
perfc_expect_error(micro_batch_2e62
  "gpt2_small.onnx: tensor 'input_ids' of shape \\[4611686018427387904, 1024\\] holds more than 2\\^62 bytes"
  ${STRATEGY_ARGS} --micro-batch 4611686018427387904)
add_test(NAME cli.micro_batch_2e32
         COMMAND $<TARGET_FILE:perfc> ${STRATEGY_ARGS} --micro-batch 4294967296)
set_tests_properties(cli.micro_batch_2e32 PROPERTIES PASS_REGULAR_EXPRESSION
  "global batch 4294967296 = 1 micro-batch of 4294967296")
# The same overflow from flags: pp x vp wraps to 0 in 32 bits.
perfc_expect_error(train_chunks_wrap
  "gpt2_small.onnx: pp 2 x vp 2147483648 = 4294967296 pipeline chunks, but the model has 12 blocks"
  ${STRATEGY_ARGS} --pp 2 --vp 2147483648 --dp 4)
# --time-limit: a limit too short to finish returns the best plan found,
# marked not proven (no timing is asserted: the loop stops after the first
# candidate whatever the machine's speed).
add_test(NAME cli.plan_time_limit
         COMMAND $<TARGET_FILE:perfc> ${PLAN_ARGS} --plan --time-limit 1e-9
                 --format json)
set_tests_properties(cli.plan_time_limit PROPERTIES PASS_REGULAR_EXPRESSION
  "\"plan\": {.*\"optimal\": false,.*\"search\": {.*\"timed_out\": true")
add_test(NAME cli.storage_type
         COMMAND $<TARGET_FILE:perfc> ${ZOO}/resnet18.onnx --hw t4 --compute-type int8
                 --storage-type int8 --ops 1 --explain)
set_tests_properties(cli.storage_type PROPERTIES PASS_REGULAR_EXPRESSION
  "tensor int8")
perfc_expect_error(storage_type "--storage-type: unknown --compute-type 'fp9'"
                   ${ZOO}/resnet18.onnx --hw t4 --storage-type fp9)
# Heterogeneous placement (--place, passes/Placement.h).
add_test(NAME cli.place_table
         COMMAND $<TARGET_FILE:perfc> ${ZOO}/resnet18.onnx --hw snapdragon-8-gen-2
                 --place --compute-type int8 --ops 3)
set_tests_properties(cli.place_table PROPERTIES PASS_REGULAR_EXPRESSION
  "placement [0-9.]+ [mu]s = kernels .* proven optimal by z3\n.*best single processor: snapdragon-8-gen-2-npu")
add_test(NAME cli.place_json
         COMMAND $<TARGET_FILE:perfc> ${ZOO}/mobilenet_v2.onnx --hw jetson-agx-orin
                 --place --compute-type fp16 --format json)
set_tests_properties(cli.place_json PROPERTIES PASS_REGULAR_EXPRESSION
  "\"placement\": {.*\"assignment\": \\[.*\"single_device\": \\[.*\"optimal\": true.*\"device\": \"jetson-agx-orin-")
perfc_expect_error(place_needs_hw "--place needs --hw" ${ZOO}/resnet18.onnx --place)
perfc_expect_error(place_one_device "cluster 't4' holds one kind of processor per node"
                   ${ZOO}/resnet18.onnx --hw t4 --place)
perfc_expect_error(place_train "--place places inference kernels"
                   ${ZOO}/resnet18.onnx --hw jetson-agx-orin --place --train)
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/cli-two-dlas.yaml
"cluster:
  name: two-dlas
  nodes:
    - devices:
        - {device: jetson-agx-orin-dla, count: 1}
        - {device: jetson-agx-xavier-dla, count: 1}
      intra_node_link: soc-shared-memory
")
perfc_expect_error(place_unsupported
  "bert_base.onnx: node '/word_embeddings/Gather' \\(Gather\\): no processor of 'two-dlas' runs int8 data_movement ops"
  ${ZOO}/bert_base.onnx --dim seq=128 --hw ${CMAKE_CURRENT_BINARY_DIR}/cli-two-dlas.yaml
  --place --compute-type int8)

# Eager training (--no-fusion) with gradient accumulation: 3 passes after
# the first of 4 micro-batches, in the JSON and the table; fused: none.
add_test(NAME cli.grad_accum_json
         COMMAND $<TARGET_FILE:perfc> ${ZOO}/resnet18.onnx --hw a100-sxm4-80gb
                 --train --micro-batch 8 --global-batch 32 --no-fusion
                 --optimizer momentum --format json)
set_tests_properties(cli.grad_accum_json PROPERTIES PASS_REGULAR_EXPRESSION
  "\"micro_batches\": 4,.*\"step\": {[^}]*\"optimizer_s\": [0-9.e-]+,[^}]*\"grad_accum_s\": [0-9.]*[1-9][0-9.e-]*,")
add_test(NAME cli.grad_accum_table
         COMMAND $<TARGET_FILE:perfc> ${ZOO}/resnet18.onnx --hw a100-sxm4-80gb
                 --train --micro-batch 8 --global-batch 32 --no-fusion
                 --optimizer momentum)
set_tests_properties(cli.grad_accum_table PROPERTIES PASS_REGULAR_EXPRESSION
  "gradient accumulation [0-9.]+ [mu]s \\(3 passes")
# FlashAttention inference: GPT-2's causal attention kernels skip the blocks
# above the diagonal (hardware.flash_attention).
add_test(NAME cli.flash_attention_inference
         COMMAND $<TARGET_FILE:perfc> ${ZOO}/gpt2_small.onnx --dim seq=1024
                 --hw a100-sxm4-80gb --flash-attention --format json)
set_tests_properties(cli.flash_attention_inference PROPERTIES
  PASS_REGULAR_EXPRESSION "\"flash_attention\": true")
# FlashAttention training (--flash-attention): reported in the strategy
# (its numbers are checked by the unit tests).
add_test(NAME cli.flash_attention_json
         COMMAND sh -c "$<TARGET_FILE:perfc> zoo gpt --layers 2 --hidden 256 --heads 4 --seq 2048 --vocab 512 -o ${CMAKE_CURRENT_BINARY_DIR}/flash_gpt.onnx >/dev/null && $<TARGET_FILE:perfc> ${CMAKE_CURRENT_BINARY_DIR}/flash_gpt.onnx --hw a100-sxm4-80gb --train --dtype bf16 --micro-batch 2 --flash-attention --format json")
set_tests_properties(cli.flash_attention_json PROPERTIES PASS_REGULAR_EXPRESSION
  "\"strategy\": {[^}]*\"flash_attention\": true,")
# --explain adds how the step's parts sum up.
add_test(NAME cli.train_explain_step
         COMMAND $<TARGET_FILE:perfc> ${ZOO}/resnet18.onnx --hw a100-sxm4-80gb
                 --train --micro-batch 8 --global-batch 32 --no-fusion
                 --optimizer momentum --explain --ops 1)
set_tests_properties(cli.train_explain_step PROPERTIES PASS_REGULAR_EXPRESSION
  "time = 4 micro-batches x [0-9.]+ ms \\(stage 0: forward [0-9.]+ ms \\+ backward [0-9.]+ ms \\+ recompute [^)]*\\) \\+ bubble [^+]*\\+ p2p [^+]*\\+ gradient accumulation [0-9.]+ ms \\+ exposed dp [^+]*\\+ optimizer [0-9.]+ us = [0-9.]+ ms")
add_test(NAME cli.grad_accum_fused
         COMMAND $<TARGET_FILE:perfc> ${ZOO}/resnet18.onnx --hw a100-sxm4-80gb
                 --train --micro-batch 8 --global-batch 32
                 --optimizer momentum --format json)
set_tests_properties(cli.grad_accum_fused PROPERTIES PASS_REGULAR_EXPRESSION
  "\"grad_accum_s\": 0,")

# The host input pipeline (--input-rate): a step waits for the node's loader
# when loading its share of the batch takes longer than training on it.
add_test(NAME cli.input_rate_json
         COMMAND $<TARGET_FILE:perfc> ${ZOO}/resnet18.onnx --hw dgx-a100 --train
                 --dp 8 --micro-batch 64 --optimizer momentum --input-rate 100
                 --format json)
# 512 samples at 100 per second on the one node: 5.12 s, 100 samples/s.
set_tests_properties(cli.input_rate_json PROPERTIES PASS_REGULAR_EXPRESSION
  "\"step\": {[^}]*\"time_s\": 5\\.12[0-9]*,[^}]*\"input_s\": 5\\.12[0-9]*,[^}]*\"input_bound\": true,[^}]*\"input_wait_s\": 5\\.08[0-9]*,[^}]*\"samples_per_s\": 100,.*\"warnings\": \\[[^]]*input-bound: the devices wait 508[0-9.]* ms \\(99% of the step\\)")
perfc_expect_error(input_rate_zero
  "--input-rate must be a number of samples per second from 1e-6 to 1e15"
  ${ZOO}/resnet18.onnx --hw dgx-a100 --train --input-rate 0)
# Denormal rates would make the step infinite (invalid JSON).
perfc_expect_error(input_rate_tiny
  "--input-rate must be a number of samples per second from 1e-6 to 1e15"
  ${ZOO}/resnet18.onnx --hw dgx-a100 --train --input-rate 1e-320)
perfc_expect_error(input_rate_word
  "--input-rate 'fast' is not a number of samples per second"
  ${ZOO}/resnet18.onnx --hw dgx-a100 --train --input-rate fast)
perfc_expect_error(input_rate_needs_train
  "training options .*--input-rate\\) need --train"
  ${ZOO}/resnet18.onnx --hw dgx-a100 --input-rate 100)
# --flash-attention in inference too, but not on a model without attention.
perfc_expect_error(flash_attention_needs_attention
  "resnet18.onnx: --flash-attention: the model has no attention .*drop the flag"
  ${ZOO}/resnet18.onnx --hw dgx-a100 --flash-attention)
# Without --hw (no kernel plan predicted) too.
perfc_expect_error(flash_attention_needs_attention_no_hw
  "resnet18.onnx: --flash-attention: the model has no attention .*drop the flag"
  ${ZOO}/resnet18.onnx --flash-attention)
add_test(NAME cli.input_rate_trace
         COMMAND sh -c "$<TARGET_FILE:perfc> ${ZOO}/resnet18.onnx --hw dgx-a100 --train --dp 8 --micro-batch 64 --optimizer momentum --input-rate 1000 --trace ${CMAKE_CURRENT_BINARY_DIR}/input_trace.json >/dev/null && cat ${CMAKE_CURRENT_BINARY_DIR}/input_trace.json")
# 512 samples at 1000 per second: the loading track ends the step at 0.512 s.
set_tests_properties(cli.input_rate_trace PROPERTIES PASS_REGULAR_EXPRESSION
  "\"end_s\": 0\\.512.*\"tid\": 2,[^}]*\"name\": \"host input\".*\"name\": \"load next step's samples\",[^}]*\"tid\": 2,[^}]*\"dur\": 512000")

# --launch-overhead replaces every device's launch_overhead (CUDA graphs,
# TensorRT): named in the hardware section, priced in each kernel.
add_test(NAME cli.launch_overhead_json
         COMMAND $<TARGET_FILE:perfc> ${ZOO}/resnet18.onnx --hw a100-sxm4-80gb
                 --launch-overhead "0.5 us" --format json --explain)
set_tests_properties(cli.launch_overhead_json PROPERTIES PASS_REGULAR_EXPRESSION
  "\"hardware\": {[^}]*\"launch_overhead_s\": (5(\\.0+)?|4\\.9+[0-9]*)e-07[^}]*}.*\\+ 500 ns = ")
perfc_expect_error(launch_overhead_needs_hw
  "--launch-overhead needs --hw" ${ZOO}/resnet18.onnx --launch-overhead "1 us")
perfc_expect_error(launch_overhead_unit
  "--launch-overhead '3': time '3' has no unit"
  ${ZOO}/resnet18.onnx --hw t4 --launch-overhead 3)
perfc_expect_error(launch_overhead_range
  "--launch-overhead '2 s' must be from 0 to 1 second"
  ${ZOO}/resnet18.onnx --hw t4 --launch-overhead "2 s")

# --overlap-param-gather: ZeRO 1's parameter all-gather in buckets during
# the next forward (Megatron-Core), named in the strategy and explained.
add_test(NAME cli.overlap_param_gather_json
         COMMAND $<TARGET_FILE:perfc> ${ZOO}/gpt2_small.onnx --dim seq=128 --hw dgx-a100
                 --train --dp 8 --zero 1 --overlap-param-gather --global-batch 8
                 --explain --format json --ops 0)
set_tests_properties(cli.overlap_param_gather_json PROPERTIES PASS_REGULAR_EXPRESSION
  "\"overlap_param_gather\": true,.*all-gather of 497.8 MB of parameters in 14 buckets during the next step's first forward.*dp 8: parameters: 14 buckets during the next forward\; the largest: ring all-gather")
perfc_expect_error(overlap_param_gather_zero
  "--overlap-param-gather overlaps the sharded optimizer's all-gather of the updated parameters with the next forward, but ZeRO 0 has no sharded optimizer: use --zero 1 or 2"
  ${ZOO}/gpt2_small.onnx --dim seq=128 --hw dgx-a100 --train --dp 8 --overlap-param-gather --global-batch 8)
perfc_expect_error(overlap_param_gather_deepspeed
  "DeepSpeed's ZeRO 1 and 2 all-gather the updated parameters inside the optimizer step, not during the next forward: drop --overlap-param-gather"
  ${ZOO}/gpt2_small.onnx --dim seq=128 --hw dgx-a100 --train --dp 8 --zero 1 --overlap-param-gather --framework deepspeed --global-batch 8)
perfc_expect_error(overlap_param_gather_without_train
  "--overlap-param-gather overlaps a training step's parameter all-gather: add --train"
  ${ZOO}/gpt2_small.onnx --dim seq=128 --hw dgx-a100 --overlap-param-gather)
# An option of one mode is refused in another, never dropped: an inference
# with --dtype bf16 had been priced in the model's fp32.
perfc_expect_error(dtype_without_train
  "--dtype sets a training step's precision: add --train, or for inference give --compute-type \\(arithmetic\\) and --storage-type \\(tensors\\)$"
  ${ZOO}/resnet18.onnx --hw a100-sxm4-80gb --dtype bf16)
perfc_expect_error(optimizer_without_train
  "--optimizer applies to a training step: add --train"
  ${ZOO}/resnet18.onnx --hw a100-sxm4-80gb --optimizer adam)
perfc_expect_error(vp_without_train
  "--vp applies to a training step: add --train"
  ${ZOO}/resnet18.onnx --hw dgx-a100 --vp 2)
perfc_expect_error(top_without_plan
  "--top applies to the planner's search: add --train --plan"
  ${ZOO}/resnet18.onnx --hw dgx-a100 --train --top 3)
perfc_expect_error(devices_without_plan
  "--devices applies to the planner's search: add --train --plan"
  ${ZOO}/resnet18.onnx --hw dgx-a100 --devices 4)
perfc_expect_error(time_limit_without_search
  "--time-limit applies to a search: add --train --plan, or --place"
  ${ZOO}/resnet18.onnx --hw dgx-a100 --train --time-limit 5)
perfc_expect_error(comm_protocol_without_split
  "--comm-protocol prices collectives, which only a split runs: add --train, or --tp N or --ep N"
  ${ZOO}/resnet18.onnx --hw dgx-a100 --comm-protocol LL)
perfc_expect_error(conv_layout_without_hw
  "--conv-layout needs --hw"
  ${ZOO}/resnet18.onnx --conv-layout nchw)

# --memory-reserve takes the runtime's share from every device's memory
# before anything is fitted: named in the hardware section, the capacity
# what is left; a step that fitted does not, a plan fits what is left.
add_test(NAME cli.memory_reserve_json
         COMMAND $<TARGET_FILE:perfc> ${ZOO}/resnet18.onnx --hw a100-sxm4-80gb
                 --memory-reserve "4 GiB" --format json)
set_tests_properties(cli.memory_reserve_json PROPERTIES PASS_REGULAR_EXPRESSION
  "\"hardware\": {[^}]*\"memory_reserve_bytes\": 4294967296[^}]*}.*\"capacity_bytes\": 81604378624,")
add_test(NAME cli.memory_reserve_train
         COMMAND $<TARGET_FILE:perfc> ${ZOO}/gpt2_small.onnx --dim seq=128 --hw t4
                 --train --micro-batch 8 --dtype fp16 --memory-reserve "14 GiB")
set_tests_properties(cli.memory_reserve_train PROPERTIES PASS_REGULAR_EXPRESSION
  "memory    2.437 GB of 2.147 GB per device -- DOES NOT FIT")
perfc_expect_error(memory_reserve_plan
  "gpt2_small.onnx: no strategy fits in 1.2 GiB per device \\(what --memory-reserve's 14.8 GiB leaves\\): the smallest needs 1.9 GiB"
  ${ZOO}/gpt2_small.onnx --dim seq=128 --hw t4 --train --dtype fp16 --plan
  --global-batch 8 --memory-reserve "14.8 GiB")
add_test(NAME cli.memory_reserve_zero
         COMMAND $<TARGET_FILE:perfc> ${ZOO}/resnet18.onnx --hw a100-sxm4-80gb
                 --memory-reserve 0 --format json)
set_tests_properties(cli.memory_reserve_zero PROPERTIES PASS_REGULAR_EXPRESSION
  "\"memory_reserve_bytes\": 0[^}]*}.*\"capacity_bytes\": 85899345920,")
perfc_expect_error(memory_reserve_needs_hw
  "--memory-reserve needs --hw" ${ZOO}/resnet18.onnx --memory-reserve "1 GiB")
perfc_expect_error(memory_reserve_too_large
  "--memory-reserve '17 GiB' leaves nothing of t4's 16 GiB: reserve less than that"
  ${ZOO}/resnet18.onnx --hw t4 --memory-reserve "17 GiB")
perfc_expect_error(memory_reserve_unit
  "--memory-reserve '2 GB/s': 'GB/s' is a unit of bandwidth, but a capacity is expected here"
  ${ZOO}/resnet18.onnx --hw t4 --memory-reserve "2 GB/s")

# --framework: the plan is one the framework runs (DeepSpeed: no ZeRO 2 or 3
# with pp > 1, no vp), the search says which, and a given strategy it
# refuses is an error naming the rule.
add_test(NAME cli.plan_framework
         COMMAND $<TARGET_FILE:perfc> ${PLAN_ARGS} --plan --framework deepspeed
                 --format json)
set_tests_properties(cli.plan_framework PROPERTIES PASS_REGULAR_EXPRESSION
  "\"search\": {[^}]*\"framework\": \"deepspeed\"")
perfc_expect_error(framework_refuses
  "--framework deepspeed does not run pp 2, vp 1, ZeRO 2: DeepSpeed's pipeline engine refuses ZeRO 2 and 3"
  ${ZOO}/gpt2_small.onnx --dim seq=128 --hw dgx-a100 --train --pp 2 --dp 4
  --zero 2 --global-batch 8 --framework deepspeed)
perfc_expect_error(framework_pinned
  "--framework megatron does not run pp 1, vp 1, ZeRO 3: Megatron-LM's distributed optimizer shards optimizer states only"
  ${PLAN_ARGS} --plan --zero 3 --framework megatron)
perfc_expect_error(framework_unknown
  "unknown --framework 'pytorch': use any, megatron, deepspeed or fsdp"
  ${ZOO}/gpt2_small.onnx --dim seq=128 --hw dgx-a100 --train --framework pytorch)
# The communication behind the step, collective by collective.
add_test(NAME cli.train_comm_explain
         COMMAND $<TARGET_FILE:perfc> ${ZOO}/gpt2_small.onnx --dim seq=128 --hw dgx-a100
                 --train --tp 2 --dp 4 --global-batch 8 --explain --ops 0)
set_tests_properties(cli.train_comm_explain PROPERTIES PASS_REGULAR_EXPRESSION
  "tp 2, stage 0, per micro-batch: [0-9]+ x all-reduce of [0-9.]+ [KM]B \\([0-9.]+ [mu]s in all\\), each ring all-reduce, 2 ranks on 1 node, NCCL (LL|LL128|Simple): base \\+ 2\\(n-1\\) x hop \\+ 2\\(n-1\\)/n x B / \\(bw x share\\)")
# How the peak stage's memory adds up, in the JSON too.
add_test(NAME cli.train_memory_explain
         COMMAND $<TARGET_FILE:perfc> ${ZOO}/gpt2_small.onnx --dim seq=128 --hw dgx-a100
                 --train --pp 2 --dp 4 --global-batch 16 --zero 3 --dtype bf16
                 --format json --ops 0)
set_tests_properties(cli.train_memory_explain PROPERTIES PASS_REGULAR_EXPRESSION
  "\"memory\": {[^}]*\"explain\": \"memory \\(stage 0\\): weights [0-9]+ parameters x 2 B / dp 4 \\(ZeRO 3\\) = [0-9.]+ MB\; gradients [^\;]*\; optimizer [0-9]+ parameters x 12 B \\(Adam moments 8 \\+ fp32 master weights 4\\) / dp 4 \\(ZeRO 3\\) = ")
# The collectives' protocol: NCCL's choice by default, one pinned as
# NCCL_PROTO pins it, or the textbook alpha-beta forms.
perfc_expect_error(comm_protocol_unknown
  "unknown --comm-protocol 'ring': use auto, LL, LL128, Simple or alpha-beta"
  ${ZOO}/gpt2_small.onnx --dim seq=128 --hw dgx-a100 --train --comm-protocol ring)
add_test(NAME cli.train_comm_protocol_textbook
         COMMAND $<TARGET_FILE:perfc> ${ZOO}/gpt2_small.onnx --dim seq=128 --hw dgx-a100
                 --train --tp 2 --dp 4 --global-batch 8 --explain --ops 0
                 --comm-protocol alpha-beta)
set_tests_properties(cli.train_comm_protocol_textbook PROPERTIES PASS_REGULAR_EXPRESSION
  "each ring all-reduce, 2 ranks on 1 node: 2\\(n-1\\)/n x B / bw \\+ 2\\(n-1\\) x alpha")
add_test(NAME cli.train_comm_protocol_json
         COMMAND $<TARGET_FILE:perfc> ${ZOO}/gpt2_small.onnx --dim seq=128 --hw dgx-a100
                 --train --tp 2 --global-batch 1 --format json --ops 0
                 --comm-protocol ll128)
set_tests_properties(cli.train_comm_protocol_json PROPERTIES PASS_REGULAR_EXPRESSION
  "\"comm_protocol\": \"LL128\"")
add_test(NAME cli.tp_inference_comm_protocol
         COMMAND $<TARGET_FILE:perfc> ${ZOO}/gpt2_small.onnx --dim seq=16 --hw dgx-a100
                 --tp 2 --explain --ops 40 --comm-protocol Simple)
set_tests_properties(cli.tp_inference_comm_protocol PROPERTIES PASS_REGULAR_EXPRESSION
  "then an all-reduce of '[^']+' over the 2 tensor-parallel ranks: ring all-reduce, 2 ranks on 1 node, NCCL Simple: ")
# perfc hw comm: the collective model as nccl-tests prints a measurement.
add_test(NAME cli.hw_comm
         COMMAND $<TARGET_FILE:perfc> hw comm dgx-a100 --bytes 8,64M)
set_tests_properties(cli.hw_comm PROPERTIES PASS_REGULAR_EXPRESSION
  "all-reduce over 8 ranks \\(1 node x 8\\) of 'dgx-a100', nvswitch-gen2\; algorithm auto, protocol auto\n +size \\(B\\) +time \\(us\\) +algbw GB/s +busbw GB/s  algorithm\n +8 +10\\.18 +0\\.00 +0\\.00  ring/LL\n +67108864 +564\\.40 +118\\.90 +208\\.08  ring/Simple\n")
add_test(NAME cli.hw_comm_json
         COMMAND $<TARGET_FILE:perfc> hw comm selene-a100-80gb --ranks 16 --stride 8
                 --collective reduce-scatter --bytes 25M --comm-protocol alpha-beta
                 --format json --explain)
set_tests_properties(cli.hw_comm_json PROPERTIES PASS_REGULAR_EXPRESSION
  "\"collective\": \"reduce-scatter\",[ \n]+\"ranks\": 16,[ \n]+\"stride\": 8,[ \n]+\"nodes\": 16,[ \n]+\"ranks_per_node\": 1,.*\"bytes\": 26214400,.*\"protocol\": \"alpha-beta\",[ \n]+\"explain\": \"ring reduce-scatter, 16 ranks \\(16 nodes x 1\\): \\(n-1\\)/n x B / bw")
perfc_expect_error(hw_comm_ranks
  "hw comm: a group of 16 ranks with stride 1 needs 16 devices; cluster 'dgx-a100' has 8"
  hw comm dgx-a100 --ranks 16)
perfc_expect_error(hw_comm_size
  "--bytes '1\\.5M': give a whole number of bytes from 1 to 1P, with an optional K, M, G, T or P"
  hw comm dgx-a100 --bytes 1.5M)
perfc_expect_error(hw_comm_collective
  "unknown --collective 'allreduce': use all-reduce, reduce-scatter, all-gather, all-to-all, broadcast or point-to-point"
  hw comm dgx-a100 --collective allreduce)
perfc_expect_error(hw_comm_no_cluster
  "hw comm: expected one CLUSTER"
  hw comm)
perfc_expect_error(hw_comm_option_elsewhere
  "--ranks is an option of 'hw comm', not of 'hw list'"
  hw list --ranks 4)
add_test(NAME cli.hw_comm_stride_default
         COMMAND $<TARGET_FILE:perfc> hw comm selene-a100-80gb --stride 8 --bytes 1K)
set_tests_properties(cli.hw_comm_stride_default PROPERTIES PASS_REGULAR_EXPRESSION
  "all-reduce over 64 ranks \\(64 nodes x 1\\) of 'selene-a100-80gb', infiniband-hdr")
# NVSwitch gen 3 reduces in the switch: NCCL's NVLS for large all-reduces
# on one DGX H100 node; not on gen 2.
add_test(NAME cli.hw_comm_nvls
         COMMAND $<TARGET_FILE:perfc> hw comm dgx-h100 --bytes 1K,8G --explain)
set_tests_properties(cli.hw_comm_nvls PROPERTIES PASS_REGULAR_EXPRESSION
  " +1024 +[0-9.]+ +[0-9.]+ +[0-9.]+  ring/LL\n.* +8589934592 +29771\\.69 +288\\.53 +504\\.92  nvls/Simple\n +NVLS all-reduce \\(the switch reduces\\), 8 ranks on 1 node, NCCL Simple: hop_nvls \\+ B / \\(bw x 5/6\\) = 23 us \\+ ")
add_test(NAME cli.hw_comm_nvls_unavailable
         COMMAND $<TARGET_FILE:perfc> hw comm dgx-a100 --bytes 8G --algorithm nvls --explain)
set_tests_properties(cli.hw_comm_nvls_unavailable PROPERTIES PASS_REGULAR_EXPRESSION
  "ring/Simple\n.*\\(nvls needs a group on one node over an NVSwitch with switch_reduction, and a protocol other than LL and LL128\; ring used\\)")
# Tensor-parallel exchanges overlapped with their GEMMs (Megatron-Core's
# userbuffers): part of tp_comm_s moves to tp_overlapped_s.
add_test(NAME cli.train_tp_comm_overlap
         COMMAND $<TARGET_FILE:perfc> ${ZOO}/gpt2_small.onnx --dim seq=128 --hw dgx-a100
                 --train --tp 4 --sp --tp-comm-overlap --global-batch 2 --format json --ops 0)
set_tests_properties(cli.train_tp_comm_overlap PROPERTIES PASS_REGULAR_EXPRESSION
  "\"sp\": true,[ \n]+\"tp_comm_overlap\": true,.*\"tp_overlapped_s\": [0-9.]*[1-9]")
perfc_expect_error(tp_comm_overlap_without_sp
  "--tp-comm-overlap overlaps the all-gathers and reduce-scatters of sequence parallelism: add --sp \\(and --tp of at least 2\\)"
  ${ZOO}/gpt2_small.onnx --dim seq=128 --hw dgx-a100 --train --tp 4 --tp-comm-overlap)
perfc_expect_error(tp_comm_overlap_without_train
  "--tp-comm-overlap overlaps a training step's tensor-parallel exchanges: add --train --tp N --sp"
  ${ZOO}/gpt2_small.onnx --dim seq=128 --hw dgx-a100 --tp-comm-overlap)
perfc_expect_error(sp_without_train
  "--sp splits a training step's activations by sequence: add --train --tp N"
  ${ZOO}/gpt2_small.onnx --dim seq=128 --hw dgx-a100 --sp)
# FP8 training as Transformer Engine runs it: BF16 tensors, each block GEMM's
# row with its cast to FP8.
add_test(NAME cli.train_fp8_recipe_json
         COMMAND $<TARGET_FILE:perfc> ${ZOO}/gpt2_small.onnx --dim seq=128 --hw dgx-h100
                 --train --dtype fp8 --format json)
set_tests_properties(cli.train_fp8_recipe_json PROPERTIES PASS_REGULAR_EXPRESSION
  "\"compute_type\": \"fp8e4m3\",[ \n]+\"storage_type\": \"bf16\".*\"fp8_cast_s\": [0-9.e-]+")
# Context parallelism: each sequence over a ring of cp ranks.
add_test(NAME cli.train_context_parallel_json
         COMMAND $<TARGET_FILE:perfc> ${ZOO}/gpt2_small.onnx --dim seq=128 --hw dgx-a100
                 --train --cp 2 --dp 4 --flash-attention --global-batch 8 --format json --ops 0)
set_tests_properties(cli.train_context_parallel_json PROPERTIES PASS_REGULAR_EXPRESSION
  "\"tp\": 1,[ \n]+\"cp\": 2,.*\"devices\": 8.*\"cp_overlapped_s\": [0-9.e-]*[1-9].*cp 2, stage 0, per micro-batch and attention: 1 ring step sending 393.2 KB")
perfc_expect_error(cp_without_flash_attention
  "gpt2_small.onnx: --cp 2: context parallelism runs ring attention in FlashAttention-style kernels \\(Transformer Engine's\\); add --flash-attention"
  ${ZOO}/gpt2_small.onnx --dim seq=128 --hw dgx-a100 --train --cp 2 --global-batch 2)
perfc_expect_error(cp_sequence_chunks
  "--cp 8: the sequence \\(120 keys in attention '/h.0/attn/MatMul'\\) must cut into 2 x cp = 16 equal chunks"
  ${ZOO}/gpt2_small.onnx --dim seq=120 --hw dgx-a100 --train --cp 8 --flash-attention --global-batch 8)
perfc_expect_error(cp_without_train
  "training options \\(--dp, --cp, "
  ${ZOO}/gpt2_small.onnx --dim seq=128 --hw dgx-a100 --cp 2)
# The all-to-all exchange (DeepSpeed-Ulysses; --framework deepspeed's
# default), with or without FlashAttention.
add_test(NAME cli.train_context_parallel_a2a_json
         COMMAND $<TARGET_FILE:perfc> ${ZOO}/gpt2_small.onnx --dim seq=128 --hw dgx-a100
                 --train --cp 2 --cp-comm a2a --dp 4 --global-batch 8 --format json --ops 0 --explain)
set_tests_properties(cli.train_context_parallel_a2a_json PROPERTIES PASS_REGULAR_EXPRESSION
  "\"cp\": 2,[ \n]+\"cp_comm\": \"a2a\",.*\"cp_comm_s\": [0-9.e-]*[1-9].*cp 2 \\(all-to-all\\), stage 0, per micro-batch and attention: Q 196.6 KB, K and V 393.2 KB, the output 196.6 KB")
add_test(NAME cli.train_context_parallel_deepspeed
         COMMAND $<TARGET_FILE:perfc> ${ZOO}/gpt2_small.onnx --dim seq=128 --hw dgx-a100
                 --train --cp 4 --framework deepspeed --global-batch 8)
set_tests_properties(cli.train_context_parallel_deepspeed PROPERTIES PASS_REGULAR_EXPRESSION
  "training  dp 1 x tp 1 x cp 4 \\(a2a\\) x pp 1 on 4 x a100")
add_test(NAME cli.plan_context_parallel_deepspeed
         COMMAND $<TARGET_FILE:perfc> ${ZOO}/gpt2_small.onnx --dim seq=128 --hw dgx-a100
                 --train --cp 2 --framework deepspeed --plan --global-batch 8 --format json --ops 0)
set_tests_properties(cli.plan_context_parallel_deepspeed PROPERTIES PASS_REGULAR_EXPRESSION
  "\"plan\": {[ \n]+\"dp\": [0-9]+,[ \n]+\"tp\": [0-9]+,[ \n]+\"cp\": 2,[ \n]+\"cp_comm\": \"a2a\"")
perfc_expect_error(cp_comm_unknown
  "unknown --cp-comm 'ring': use p2p or a2a"
  ${ZOO}/gpt2_small.onnx --dim seq=128 --hw dgx-a100 --train --cp 2 --cp-comm ring)
perfc_expect_error(cp_a2a_heads
  "--cp 8 --cp-comm a2a: attention '/h.0/attn/Softmax' has 12 heads per tensor-parallel rank, which do not split over 8 ranks"
  ${ZOO}/gpt2_small.onnx --dim seq=128 --hw dgx-a100 --train --cp 8 --cp-comm a2a --global-batch 8)
perfc_expect_error(cp_ring_deepspeed
  "--framework deepspeed does not run pp 1, vp 1, cp 2, ZeRO 0: DeepSpeed splits sequences with Ulysses' all-to-all of heads, not a ring of keys and values: --cp-comm a2a"
  ${ZOO}/gpt2_small.onnx --dim seq=128 --hw dgx-a100 --train --cp 2 --cp-comm p2p --flash-attention --framework deepspeed --global-batch 2)
# --plan with --cp pins the degree (and searches it with --flash-attention).
add_test(NAME cli.plan_context_parallel
         COMMAND $<TARGET_FILE:perfc> ${ZOO}/gpt2_small.onnx --dim seq=128 --hw dgx-a100
                 --train --cp 2 --flash-attention --plan --global-batch 8 --format json --ops 0)
set_tests_properties(cli.plan_context_parallel PROPERTIES PASS_REGULAR_EXPRESSION
  "\"plan\": {[ \n]+\"dp\": 4,[ \n]+\"tp\": 1,[ \n]+\"cp\": 2,.*\"stages\": \\[[^]]*\"devices\": 8,.*\"placement\": \\[[ \n]+{[ \n]+\"stage\": 0,[ \n]+\"ranks\": \\[[ \n]+0,[ \n]+7[ \n]+\\]")
perfc_expect_error(cp_plan_without_flash_attention
  "gpt2_small.onnx: --cp 2: context parallelism runs ring attention in FlashAttention-style kernels"
  ${ZOO}/gpt2_small.onnx --dim seq=128 --hw dgx-a100 --train --cp 2 --plan --global-batch 8)
# Mixtures of experts: perfc zoo --experts, trained with --ep.
set(ZOO_MOE ${CMAKE_CURRENT_BINARY_DIR}/zoo_moe.onnx)
add_test(NAME cli.zoo_moe_write
         COMMAND $<TARGET_FILE:perfc> zoo llama --layers 2 --hidden 512
                 --heads 8 --kv-heads 2 --ffn 1024 --experts 8 --top-k 2
                 --seq 256 --vocab 32000 -o ${ZOO_MOE})
set_tests_properties(cli.zoo_moe_write PROPERTIES FIXTURES_SETUP zoo_moe
  PASS_REGULAR_EXPRESSION "ffn 1024\; 8 experts \\(top-2\\).*: 59,255,296 parameters")
add_test(NAME cli.train_expert_parallel_json
         COMMAND $<TARGET_FILE:perfc> ${ZOO_MOE} --hw dgx-h100 --train
                 --dtype bf16 --dp 8 --ep 4 --zero 1 --global-batch 16
                 --format json --ops 0 --explain)
set_tests_properties(cli.train_expert_parallel_json PROPERTIES
  FIXTURES_REQUIRED zoo_moe
  PASS_REGULAR_EXPRESSION "\"ep\": 4,.*\"ep_comm_s\": [0-9.e-]*[1-9].*ep 4, stage 0, per micro-batch: 8 all-to-alls.*experts' gradients over the dp 8 / ep 4 = 2 ranks holding the same experts")
add_test(NAME cli.train_expert_parallel_table
         COMMAND $<TARGET_FILE:perfc> ${ZOO_MOE} --hw dgx-h100 --train
                 --dp 8 --ep 8 --global-batch 8)
set_tests_properties(cli.train_expert_parallel_table PROPERTIES
  FIXTURES_REQUIRED zoo_moe
  PASS_REGULAR_EXPRESSION "training  dp 8 x tp 1 x pp 1, ep 8 on 8 x h100.*exposed comm [0-9.]+ [mun]?s \\(tp 0.0 ns, ep [0-9.]+ [mu]s,")
add_test(NAME cli.plan_expert_parallel
         COMMAND $<TARGET_FILE:perfc> ${ZOO_MOE} --hw dgx-h100 --train
                 --plan --ep 4 --global-batch 16 --format json --ops 0)
set_tests_properties(cli.plan_expert_parallel PROPERTIES
  FIXTURES_REQUIRED zoo_moe
  PASS_REGULAR_EXPRESSION "\"plan\": {[ \n]+\"dp\": [0-9]+,[ \n]+\"tp\": [0-9]+,[ \n]+\"cp\": 1,[ \n]+\"cp_comm\": \"p2p\",[ \n]+\"ep\": 4,")
# Megatron-Core's combined 1F1B: each micro-batch's all-to-alls beside
# another's kernels; the strategy says so, the step counts what is hidden
# apart, and --strategy reads the flag back.
add_test(NAME cli.train_ep_comm_overlap_json
         COMMAND $<TARGET_FILE:perfc> ${ZOO_MOE} --hw dgx-h100 --train
                 --dtype bf16 --dp 8 --ep 4 --zero 1 --global-batch 32
                 --overlap-moe-expert-parallel-comm --format json --ops 0
                 --explain)
set_tests_properties(cli.train_ep_comm_overlap_json PROPERTIES
  FIXTURES_REQUIRED zoo_moe
  PASS_REGULAR_EXPRESSION "\"overlap_moe_expert_parallel_comm\": true,.*\"ep_overlapped_s\": [0-9.e-]*[1-9].*beside the kernels of the micro-batch co-scheduled with it \\(--overlap-moe-expert-parallel-comm")
add_test(NAME cli.train_ep_comm_overlap_table
         COMMAND $<TARGET_FILE:perfc> ${ZOO_MOE} --hw dgx-h100 --train
                 --dtype bf16 --dp 8 --ep 4 --global-batch 32
                 --overlap-moe-expert-parallel-comm --explain)
set_tests_properties(cli.train_ep_comm_overlap_table PROPERTIES
  FIXTURES_REQUIRED zoo_moe
  PASS_REGULAR_EXPRESSION "ep 4 \\(all-to-alls overlapped\\) on 8 x h100.*\\(tp 0.0 ns, ep [0-9.]+ [mun]?s of [0-9.]+ [mu]s,.*\\) \\+ unpaired all-to-alls [0-9.]+ [mu]s \\+ bubble")
perfc_expect_error(ep_comm_overlap_full_recompute
  "zoo_moe.onnx: --overlap-moe-expert-parallel-comm co-schedules one micro-batch's forward with another's backward, which full recomputation does not allow"
  ${ZOO_MOE} --hw dgx-h100 --train --dtype bf16 --dp 8 --ep 4 --global-batch 8 --recompute full --overlap-moe-expert-parallel-comm)
set_tests_properties(cli.error.ep_comm_overlap_full_recompute PROPERTIES FIXTURES_REQUIRED zoo_moe)
perfc_expect_error(ep_comm_overlap_deepspeed
  "DeepSpeed-MoE runs each all-to-all in its own micro-batch's pass.*: drop --overlap-moe-expert-parallel-comm"
  ${ZOO_MOE} --hw dgx-h100 --train --dtype bf16 --dp 8 --ep 4 --global-batch 8 --framework deepspeed --overlap-moe-expert-parallel-comm)
set_tests_properties(cli.error.ep_comm_overlap_deepspeed PROPERTIES FIXTURES_REQUIRED zoo_moe)
perfc_expect_error(ep_comm_overlap_without_train
  "--overlap-moe-expert-parallel-comm applies to a training step: add --train"
  ${ZOO_MOE} --hw dgx-h100 --ep 4 --batch 8 --overlap-moe-expert-parallel-comm)
set_tests_properties(cli.error.ep_comm_overlap_without_train PROPERTIES FIXTURES_REQUIRED zoo_moe)
# Megatron-Core's --recompute-modules: selective recomputation of the
# norms and the experts' activation; the strategy names them, the table
# and the explanation too, and a plan file reads them back.
add_test(NAME cli.train_recompute_modules_json
         COMMAND $<TARGET_FILE:perfc> ${ZOO_MOE} --hw dgx-h100 --train
                 --dtype bf16 --dp 8 --ep 4 --global-batch 16
                 --recompute-modules moe_act,layernorm --format json --ops 0
                 --explain)
set_tests_properties(cli.train_recompute_modules_json PROPERTIES
  FIXTURES_REQUIRED zoo_moe
  PASS_REGULAR_EXPRESSION "\"recompute\": \"selective\",[ \n]+\"recompute_modules\": \\[[ \n]+\"layernorm\",[ \n]+\"moe_act\"[ \n]+\\],.*kept for backward \\(selective recomputation of layernorm, moe_act: their results dropped, their inputs kept\\).*\"recompute_s\": [0-9.e-]*[1-9]")
add_test(NAME cli.train_recompute_modules_table
         COMMAND $<TARGET_FILE:perfc> ${ZOO_MOE} --hw dgx-h100 --train
                 --dtype bf16 --dp 8 --ep 4 --global-batch 16
                 --recompute-modules moe --ops 0)
set_tests_properties(cli.train_recompute_modules_table PROPERTIES
  FIXTURES_REQUIRED zoo_moe
  PASS_REGULAR_EXPRESSION "ZeRO 0, recompute selective \\(moe\\)\; 2 blocks")
# Each kernel's recomputation, in its row: the experts' activation rides
# in its GEMMs' epilogues, so its elementwise work alone runs again.
add_test(NAME cli.train_recompute_modules_nodes
         COMMAND $<TARGET_FILE:perfc> ${ZOO_MOE} --hw dgx-h100 --train
                 --dtype bf16 --dp 8 --ep 4 --global-batch 16
                 --recompute-modules moe_act --format json)
set_tests_properties(cli.train_recompute_modules_nodes PROPERTIES
  FIXTURES_REQUIRED zoo_moe
  PASS_REGULAR_EXPRESSION "\"recompute_s\": [0-9.e-]+,[ \n]+\"recompute_explain\": \"the elementwise work of its fused members again \\(selective recomputation of moe_act\\)\"")
perfc_expect_error(recompute_modules_missing
  "zoo_moe.onnx: --recompute-modules mla_up_proj: the model has no latent attention \\(a low-rank down projection whose output reaches a column GEMM on the way to an attention core\\)\; drop mla_up_proj"
  ${ZOO_MOE} --hw dgx-h100 --train --recompute-modules layernorm,mla_up_proj)
set_tests_properties(cli.error.recompute_modules_missing PROPERTIES FIXTURES_REQUIRED zoo_moe)
perfc_expect_error(recompute_modules_unknown
  "unknown --recompute-modules 'attn': use core_attn, layernorm, mla_up_proj, mlp, moe_act, moe or shared_experts"
  ${ZOO}/gpt2_small.onnx --dim seq=128 --hw a100-sxm4-80gb --train --recompute-modules layernorm,attn)
perfc_expect_error(recompute_modules_full
  "recompute modules are what selective recomputation recomputes: drop --recompute full \\(the modules imply selective\\)"
  ${ZOO}/gpt2_small.onnx --dim seq=128 --hw a100-sxm4-80gb --train --recompute full --recompute-modules mlp)
perfc_expect_error(recompute_modules_without_train
  "--recompute-modules applies to a training step: add --train"
  ${ZOO}/gpt2_small.onnx --dim seq=128 --hw a100-sxm4-80gb --recompute-modules mlp)
perfc_expect_plan_error(plan_recompute_modules_full recompute_modules_full.json
  ": 'plan.recompute_modules' is given, and recompute is 'full': modules are what selective recomputation recomputes$")
perfc_expect_plan_error(plan_recompute_modules_unknown recompute_modules_unknown.json
  ": 'plan.recompute_modules\\[1\\]' is not one of core_attn, layernorm, mla_up_proj, mlp, moe_act, moe or shared_experts$")
# Megatron's --recompute-method / --recompute-num-layers: full
# recomputation of the first N blocks of each chunk (block), or of every
# block in groups of N (uniform); the strategy, each stage and the
# explanation say which; a plan file reads them back.
add_test(NAME cli.train_recompute_block_json
         COMMAND $<TARGET_FILE:perfc> ${ZOO}/gpt2_small.onnx --dim seq=1024
                 --hw dgx-a100 --train --dtype bf16 --pp 2 --dp 4
                 --global-batch 32 --recompute-method block
                 --recompute-num-layers 2 --format json --ops 0 --explain)
set_tests_properties(cli.train_recompute_block_json PROPERTIES
  PASS_REGULAR_EXPRESSION "\"recompute\": \"full\",[ \n]+\"recompute_method\": \"block\",[ \n]+\"recompute_num_layers\": 2,.*kept \\(full recomputation, block method: the inputs of each chunk's first 2 blocks, 2 of the stage's 7, and the other blocks' activations\\).*\"blocks\": 7,[ \n]+\"recomputed_blocks\": 2,.*\"blocks\": 5,[ \n]+\"recomputed_blocks\": 2,")
add_test(NAME cli.train_recompute_uniform_table
         COMMAND $<TARGET_FILE:perfc> ${ZOO}/gpt2_small.onnx --dim seq=1024
                 --hw dgx-a100 --train --dtype bf16 --pp 2 --dp 4
                 --global-batch 32 --recompute-num-layers 2 --ops 0)
set_tests_properties(cli.train_recompute_uniform_table PROPERTIES
  PASS_REGULAR_EXPRESSION "ZeRO 0, recompute full \\(uniform method, groups of 2 blocks\\)\; 12 blocks")
# The planner pinned to the block method plans with it, and its plan file
# predicts the same strategy again.
add_test(NAME cli.plan_recompute_block_roundtrip
         COMMAND sh -c "$<TARGET_FILE:perfc> ${ZOO}/gpt2_small.onnx --dim seq=1024 --hw dgx-a100 --train --dtype bf16 --plan --global-batch 64 --pp 2 --recompute-method block --recompute-num-layers 3 --format json -o ${CMAKE_CURRENT_BINARY_DIR}/plan-block.json && $<TARGET_FILE:perfc> ${ZOO}/gpt2_small.onnx --dim seq=1024 --hw dgx-a100 --train --dtype bf16 --global-batch 64 --strategy ${CMAKE_CURRENT_BINARY_DIR}/plan-block.json --format json --ops 0")
set_tests_properties(cli.plan_recompute_block_roundtrip PROPERTIES
  PASS_REGULAR_EXPRESSION "\"recompute\": \"full\",[ \n]+\"recompute_method\": \"block\",[ \n]+\"recompute_num_layers\": 3,.*\"recomputed_blocks\": [1-9][0-9]*,")
perfc_expect_error(recompute_method_unknown
  "unknown --recompute-method 'blocks': use uniform or block"
  ${ZOO}/gpt2_small.onnx --dim seq=128 --hw a100-sxm4-80gb --train --recompute-method blocks --recompute-num-layers 2)
perfc_expect_error(recompute_block_without_layers
  "--recompute-method block reruns the first N blocks of each pipeline chunk: give --recompute-num-layers N"
  ${ZOO}/gpt2_small.onnx --dim seq=128 --hw a100-sxm4-80gb --train --recompute-method block)
perfc_expect_error(recompute_num_layers_zero
  "--recompute-num-layers must be at least 1 \\(the blocks full recomputation reruns together, or of each pipeline chunk\\)"
  ${ZOO}/gpt2_small.onnx --dim seq=128 --hw a100-sxm4-80gb --train --recompute-num-layers 0)
perfc_expect_error(recompute_num_layers_selective
  "--recompute-num-layers chooses the blocks full recomputation reruns, and recomputation here is selective: drop --recompute-num-layers, or use --recompute full"
  ${ZOO}/gpt2_small.onnx --dim seq=128 --hw a100-sxm4-80gb --train --recompute selective --recompute-num-layers 2)
perfc_expect_error(recompute_num_layers_without_train
  "--recompute-num-layers applies to a training step: add --train"
  ${ZOO}/gpt2_small.onnx --dim seq=128 --hw a100-sxm4-80gb --recompute-num-layers 2)
perfc_expect_plan_error(plan_recompute_method_none recompute_method_none.json
  ": 'plan.recompute_method' is given, and recompute is 'none': it chooses the blocks full recomputation reruns$")
perfc_expect_plan_error(plan_recompute_block_no_layers recompute_block_no_layers.json
  ": 'plan.recompute_method' is 'block', and recompute_num_layers \\(the blocks each chunk reruns\\) is missing$")
perfc_expect_plan_error(plan_recompute_num_layers_zero recompute_num_layers_zero.json
  ": 'plan.recompute_num_layers' is not a whole number of blocks, 1 or more$")
perfc_expect_error(ep_not_dividing
  "zoo_moe.onnx: --ep 3 does not divide dp 4 x cp 1 = 4"
  ${ZOO_MOE} --hw dgx-h100 --train --dp 4 --ep 3 --global-batch 4)
set_tests_properties(cli.error.ep_not_dividing PROPERTIES FIXTURES_REQUIRED zoo_moe)
perfc_expect_error(ep_dense_model
  "gpt2_small.onnx: --ep 2: the model has no mixture of experts"
  ${ZOO}/gpt2_small.onnx --dim seq=128 --hw dgx-a100 --train --dp 2 --ep 2)
# Without --train, --ep serves a mixture (data-parallel attention, experts
# split): a dense model has nothing to split.
perfc_expect_error(ep_dense_inference
  "gpt2_small.onnx: --ep 2: the model has no mixture of experts \\(perfc zoo --experts writes one\\)\\; use --tp to split a dense model"
  ${ZOO}/gpt2_small.onnx --dim seq=128 --hw dgx-a100 --ep 2)
# Decoding a mixture: one token reaches its 2 experts, and only their
# weights are read; all 8 stay resident (half on each of 2 ranks).
set(ZOO_MOE_DECODE ${CMAKE_CURRENT_BINARY_DIR}/zoo_moe_decode.onnx)
add_test(NAME cli.zoo_moe_decode_write
         COMMAND $<TARGET_FILE:perfc> zoo llama --layers 2 --hidden 512
                 --heads 8 --kv-heads 2 --ffn 1024 --experts 8 --top-k 2
                 --seq 1 --past 255 --batch 1 --vocab 32000 -o ${ZOO_MOE_DECODE})
set_tests_properties(cli.zoo_moe_decode_write PROPERTIES FIXTURES_SETUP zoo_moe_decode
  PASS_REGULAR_EXPRESSION "8 experts \\(top-2\; 1 token reaches 2, 1 row each\\).*: 59,255,296 parameters")
# A mixture's routing layout is written for its batch: --max-batch says
# which batch the model could not be imported at, and why.
perfc_expect_error(max_batch_rebind
  "zoo_moe_decode.onnx: --max-batch: at batch [0-9]+: node '/layers.0/moe/dispatch/Reshape' \\(Reshape\\): reshapes"
  ${ZOO_MOE_DECODE} --hw dgx-h100 --max-batch)
set_tests_properties(cli.error.max_batch_rebind PROPERTIES
  FIXTURES_REQUIRED zoo_moe_decode)
add_test(NAME cli.moe_decode_tensor_parallel
         COMMAND $<TARGET_FILE:perfc> ${ZOO_MOE_DECODE} --hw dgx-h100 --tp 2)
set_tests_properties(cli.moe_decode_tensor_parallel PROPERTIES
  FIXTURES_REQUIRED zoo_moe_decode
  PASS_REGULAR_EXPRESSION "memory    [0-9.]+ MB at peak per rank \\(weights 118.5 MB,.*/layers.0/moe/experts/up/MatMul  MatMul  +1.049 M ")
# Served with --ep: each rank runs attention on 1/ep of the batch and holds
# 1/ep of the experts; a dispatch and a combine all-to-all per mixture.
add_test(NAME cli.moe_serve_expert_parallel
         COMMAND $<TARGET_FILE:perfc> ${ZOO_MOE} --batch 8 --hw dgx-h100 --ep 4)
set_tests_properties(cli.moe_serve_expert_parallel PROPERTIES
  FIXTURES_REQUIRED zoo_moe
  PASS_REGULAR_EXPRESSION "ep        4 ranks over nvswitch: kernels [0-9.]+ [mu]s \\+ 4 all-to-alls [0-9.]+ [mu]s \\(per rank: 1/4 of the batch and of the experts.*memory    [0-9.]+ [MG]B at peak per rank")
add_test(NAME cli.moe_serve_expert_parallel_json
         COMMAND $<TARGET_FILE:perfc> ${ZOO_MOE} --batch 8 --hw dgx-h100 --ep 4
                 --format json --ops 0)
set_tests_properties(cli.moe_serve_expert_parallel_json PROPERTIES
  FIXTURES_REQUIRED zoo_moe
  PASS_REGULAR_EXPRESSION "\"per_rank\": true.*\"expert_parallel\": {[ \n]+\"degree\": 4,[ \n]+\"link\": \"nvswitch\",[ \n]+\"all_to_alls\": 4,")
perfc_expect_error(moe_serve_ep_batch
  "zoo_moe_decode.onnx: --ep 2 splits the batch over its ranks \\(data-parallel attention\\), but input 'input_ids' has a batch of 1: give a --batch that 2 divides"
  ${ZOO_MOE_DECODE} --hw dgx-h100 --ep 2)
set_tests_properties(cli.error.moe_serve_ep_batch PROPERTIES FIXTURES_REQUIRED zoo_moe_decode)
perfc_expect_error(moe_serve_ep_and_tp
  "--ep and --tp: expert-parallel inference runs attention data-parallel"
  ${ZOO_MOE_DECODE} --hw dgx-h100 --ep 2 --tp 2)
perfc_expect_error(moe_serve_ep_without_hw
  "--ep needs --hw naming a cluster"
  ${ZOO_MOE_DECODE} --ep 2)
# Its layout is this batch's: rebinding it is refused at the dispatch.
perfc_expect_error(moe_decode_rebound_batch
  "zoo_moe_decode.onnx: node '/layers.0/moe/dispatch/Reshape' \\(Reshape\\): reshapes \\[4, 1, 2, 512\\] \\(4096 elements\\) into \\[2, 1, 512\\] \\(1024\\); its shape constant was written for other input shapes"
  ${ZOO_MOE_DECODE} --batch 4)
set_tests_properties(cli.error.moe_decode_rebound_batch PROPERTIES FIXTURES_REQUIRED zoo_moe_decode)
perfc_expect_error(zoo_moe_decode_symbolic_batch
  "zoo: --experts 8 at --seq 1 x --top-k 2 needs --batch: how many experts a step's tokens reach"
  zoo llama --layers 2 --hidden 512 --heads 8 --experts 8 --seq 1 --past 15
  --vocab 100 -o ${CMAKE_CURRENT_BINARY_DIR}/never.onnx)
# DeepSeek's multi-head latent attention: decoding caches the 512-channel
# latent and the 64-channel rotary key, which every tensor-parallel rank
# holds whole.
set(ZOO_MLA_DECODE ${CMAKE_CURRENT_BINARY_DIR}/zoo_mla_decode.onnx)
add_test(NAME cli.zoo_mla_decode_write
         COMMAND $<TARGET_FILE:perfc> zoo llama --layers 2 --hidden 1024
                 --heads 16 --kv-lora-rank 512 --q-lora-rank 384 --seq 1
                 --past 1023 --batch 4 --vocab 32000 --dtype bf16
                 -o ${ZOO_MLA_DECODE})
set_tests_properties(cli.zoo_mla_decode_write PROPERTIES FIXTURES_SETUP zoo_mla_decode
  PASS_REGULAR_EXPRESSION "16 heads \\(latent attention, kv rank 512, q rank 384\; 576 cached per token and layer\\), ffn 2816, seq 1 after 1023 cached.*: 95,558,400 parameters")
add_test(NAME cli.mla_decode_tensor_parallel
         COMMAND $<TARGET_FILE:perfc> ${ZOO_MLA_DECODE} --hw dgx-h100 --tp 2
                 --explain)
set_tests_properties(cli.mla_decode_tensor_parallel PROPERTIES
  FIXTURES_REQUIRED zoo_mla_decode
  PASS_REGULAR_EXPRESSION "graph inputs 9.428 MB, the largest 'past.0.latent' 4.714 MB")
perfc_expect_error(zoo_mla_gpt
  "zoo: --kv-lora-rank is for llama \\(DeepSeek's multi-head latent attention"
  zoo gpt --layers 2 --hidden 512 --heads 8 --kv-lora-rank 64 --seq 16
  --vocab 100 -o ${CMAKE_CURRENT_BINARY_DIR}/never.onnx)
perfc_expect_error(zoo_mla_rope_without_latent
  "zoo: --qk-rope-head-dim 32 shapes multi-head latent attention: add --kv-lora-rank"
  zoo llama --layers 2 --hidden 512 --heads 8 --qk-rope-head-dim 32 --seq 16
  --vocab 100 -o ${CMAKE_CURRENT_BINARY_DIR}/never.onnx)
perfc_expect_error(zoo_mla_zero_rank
  "zoo: --q-lora-rank 0: must be positive"
  zoo llama --layers 2 --hidden 512 --heads 8 --kv-lora-rank 64 --q-lora-rank 0
  --seq 16 --vocab 100 -o ${CMAKE_CURRENT_BINARY_DIR}/never.onnx)
perfc_expect_error(zoo_top_k_over_experts
  "zoo: --top-k 9 is more than --experts 8"
  zoo llama --layers 2 --hidden 512 --heads 8 --experts 8 --top-k 9 --seq 16
  --vocab 100 -o ${CMAKE_CURRENT_BINARY_DIR}/never.onnx)
# --moe-capacity: the experts' tokens over their balanced share.
add_test(NAME cli.train_moe_capacity
         COMMAND $<TARGET_FILE:perfc> ${ZOO_MOE} --hw dgx-h100 --train
                 --dp 8 --ep 4 --moe-capacity 1.25 --global-batch 8 --format json --ops 0)
set_tests_properties(cli.train_moe_capacity PROPERTIES
  FIXTURES_REQUIRED zoo_moe
  PASS_REGULAR_EXPRESSION "\"flash_attention\": false,[ \n]+\"moe_capacity\": 1.25,")
add_test(NAME cli.train_moe_capacity_table
         COMMAND $<TARGET_FILE:perfc> ${ZOO_MOE} --hw dgx-h100 --train
                 --dp 8 --ep 4 --moe-capacity 1.25 --global-batch 8)
set_tests_properties(cli.train_moe_capacity_table PROPERTIES
  FIXTURES_REQUIRED zoo_moe
  PASS_REGULAR_EXPRESSION "training  dp 8 x tp 1 x pp 1, ep 4 \\(capacity 1.25\\) on 8 x h100")
perfc_expect_error(moe_capacity_word
  "--moe-capacity 'lots': expected a number, the experts' tokens over their balanced share \\(1: balanced\\)"
  ${ZOO}/gpt2_small.onnx --dim seq=128 --hw dgx-a100 --train --moe-capacity lots)
perfc_expect_error(moe_capacity_dense_model
  "gpt2_small.onnx: --moe-capacity 1.50: the model has no mixture of experts"
  ${ZOO}/gpt2_small.onnx --dim seq=128 --hw dgx-a100 --train --moe-capacity 1.5)
perfc_expect_plan_error(plan_moe_capacity_negative moe_capacity_negative.json
  ": 'plan.moe_capacity' is not a number above 0 \\(at most 1e6\\)$")
