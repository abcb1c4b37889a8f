"""import perfc: the Python module of include/perfc/perfc.h (api/python)."""
import json
import os
import subprocess
import threading

import pytest

import perfc

SRC = os.environ.get("PERFC_SOURCE_DIR",
                     os.path.join(os.path.dirname(__file__), "..", ".."))
ZOO = os.path.join(SRC, "tests", "data", "zoo")


def cnn(batch=1, width=32):
    b = perfc.ModelBuilder("cnn")
    x = b.input("image", [batch, 3, 224, 224])
    x = b.relu(b.batch_norm(b.conv(x, width, 3, stride=2)))
    for stage in range(4):
        c = width << stage
        y = b.relu(b.batch_norm(b.conv(x, c, 3, stride=2 if stage else 1)))
        y = b.batch_norm(b.conv(y, c, 3))
        s = b.batch_norm(b.conv(x, c, 1, stride=2 if stage else 1, pad=0))
        x = b.relu(b.add(y, s))
    b.output(b.gemm(b.flatten(b.global_avg_pool(x)), 1000))
    return b.build()


@pytest.fixture(scope="module")
def hw():
    return perfc.load_hw("a100-sxm4-80gb")


def test_builder_predict(hw):
    m = cnn()
    assert m.num_nodes > 30 and m.batch == 1
    r = perfc.predict(m, hw)
    assert r["latency_s"] > 0 and r["flops"] > 1e9
    assert len(r["ops"]) == m.num_nodes
    assert r["ops"][0]["op"] == "Conv"
    assert r["ops"][0]["exec"] in ("kernel", "fused")
    assert perfc.predict(m)["latency_s"] is None
    assert "ops" not in perfc.predict(m, hw, ops=False)


def test_builder_shapes_and_errors():
    b = perfc.ModelBuilder("t")
    x = b.input("x", [2, 3, 32, 32])
    assert b.shape(b.conv(x, 8, 3, stride=2)) == [2, 8, 16, 16]
    with pytest.raises(perfc.Error, match="groups"):
        b.conv(x, 8, 3, groups=2)
    with pytest.raises(RuntimeError):  # perfc.Error is a RuntimeError
        b.gemm(x, 4)


def test_onnx_path_and_bytes_match_cli(hw):
    path = os.path.join(ZOO, "resnet50.onnx")
    data = open(path, "rb").read()
    a = perfc.Model.from_onnx(path, batch=4)
    b = perfc.Model.from_onnx(data, batch=4, name=path)
    assert a.name == b.name == "resnet50" and a.batch == 4
    ja = perfc.predict_json(a, hw)
    assert ja == perfc.predict_json(b, hw)
    exe = os.environ.get("PERFC_BIN")
    if exe:
        cli = subprocess.run([exe, path, "--hw", "a100-sxm4-80gb", "--batch",
                              "4", "--format", "json"], check=True,
                             capture_output=True, text=True).stdout
        assert ja == cli
    d = perfc.predict(a, hw, ops=False)
    assert d["latency_s"] == pytest.approx(json.loads(ja)["totals"]
                                           ["latency_s"])
    # The JSON's inference memory, without its explanation.
    mem = json.loads(ja)["memory"]
    assert d["memory"]["peak_bytes"] == mem["peak_bytes"]
    assert d["memory"]["weights_bytes"] == mem["weights_bytes"] == 102440608
    assert d["memory"]["fits"] and d["memory"]["peak_at"] == mem["peak_at"]
    # The largest batch that fits: as many samples as the bytes past the
    # weights, per sample, leave room for.
    assert d["memory"]["max_batch"] == mem["max_batch"] > 4
    assert d["memory"]["max_batch"] == int(
        (mem["capacity_bytes"] - mem["weights_bytes"]) /
        d["memory"]["bytes_per_sample"])
    assert "memory" not in perfc.predict(a, ops=False)


def test_storage_type_and_conv_layout():
    # As --storage-type and --conv-layout: INT8 tensors move a quarter of
    # the bytes (faster on a T4), the report says which were used, and a
    # wrong name is a perfc.Error with the choices.
    t4 = perfc.load_hw("t4")
    m = perfc.Model.from_onnx(os.path.join(ZOO, "resnet50.onnx"), batch=1)
    plain = perfc.predict(m, t4, compute_type="int8", ops=False)
    small = perfc.predict(m, t4, compute_type="int8", storage_type="int8",
                          ops=False)
    assert small["latency_s"] < plain["latency_s"]
    hwj = json.loads(perfc.predict_json(m, t4, compute_type="int8",
                                        storage_type="int8",
                                        conv_layout="nchw"))["hardware"]
    assert hwj["storage_type"] == "int8" and hwj["conv_layout"] == "nchw"
    assert "storage_type" not in json.loads(
        perfc.predict_json(m, t4))["hardware"]
    with pytest.raises(perfc.Error, match="unknown storage type 'int9'"):
        perfc.predict(m, t4, storage_type="int9")
    with pytest.raises(perfc.Error, match="unknown conv layout 'nwhc'"):
        perfc.predict(m, t4, conv_layout="nwhc")


def test_placement():
    # As --place: the dict's "placement" mirrors the JSON's (without the
    # per-kernel assignment), and the latency is the placed one.
    orin = perfc.load_hw("jetson-agx-orin")
    m = perfc.Model.from_onnx(os.path.join(ZOO, "resnet50.onnx"), batch=1)
    r = perfc.predict(m, orin, compute_type="fp16", place=True, ops=False)
    p = r["placement"]
    assert r["latency_s"] == p["latency_s"]
    assert sum(d["kernels"] for d in p["devices"]) > 0
    assert p["latency_s"] <= min(s["latency_s"] for s in p["single_device"])
    j = json.loads(perfc.predict_json(m, orin, compute_type="fp16",
                                      place=True))["placement"]
    assert j["latency_s"] == pytest.approx(p["latency_s"])
    assert [d["name"] for d in j["devices"]] == [d["name"] for d in
                                                p["devices"]]
    assert "placement" not in perfc.predict(m, orin, ops=False)
    assert "solve_s" not in j
    timed = json.loads(perfc.predict_json(m, orin, compute_type="fp16",
                                          place=True, timings=True))
    assert timed["placement"]["solve_s"] >= 0
    with pytest.raises(perfc.Error, match="one kind of processor"):
        perfc.predict(m, perfc.load_hw("t4"), place=True)


def test_dims_and_training(hw):
    m = perfc.Model.from_onnx(os.path.join(ZOO, "gpt2_small.onnx"), batch=2,
                              dims={"seq": 128})
    r = perfc.predict(m, hw, train={"recompute": "full"}, ops=False)
    assert r["train"]["step_s"] > 0 and r["train"]["global_batch"] == 2
    assert not r["train"]["input_bound"]
    assert r["train"]["blocks"] == 12 and r["train"]["blocks_from"] == "names"
    # The launch cost of another runtime (as --launch-overhead): cheaper
    # launches, a faster step; the hardware handle itself is unchanged.
    fast = perfc.predict(m, hw, train={"recompute": "full"}, ops=False,
                         launch_overhead_s=0.0)
    assert fast["train"]["step_s"] < r["train"]["step_s"]
    assert '"launch_overhead_s": 0' in perfc.predict_json(
        m, hw, train={"recompute": "full"}, launch_overhead_s=0.0)
    again = perfc.predict(m, hw, train={"recompute": "full"}, ops=False)
    assert again["train"]["step_s"] == r["train"]["step_s"]
    # Eager training (fusion off) with two micro-batches of two: one
    # gradient-accumulation pass, part of compute; fused, none.
    assert r["train"]["grad_accum_s"] == 0
    eager = perfc.predict(m, hw, train={"global_batch": 4}, fusion=False,
                          ops=False)["train"]
    assert eager["micro_batches"] == 2 and eager["grad_accum_s"] > 0
    assert eager["compute_s"] > eager["grad_accum_s"]
    # A loader of one sample per second: the step is the 2 s of loading.
    slow = perfc.predict(m, hw, train={"input_rate": 1.0}, ops=False)
    assert slow["train"]["input_bound"]
    assert slow["train"]["step_s"] == pytest.approx(2.0)
    assert slow["train"]["input_s"] == pytest.approx(2.0)
    base = perfc.predict(m, hw, train={}, ops=False)["train"]["step_s"]
    assert slow["train"]["input_wait_s"] == pytest.approx(2.0 - base)
    with pytest.raises(ValueError, match="unknown train option"):
        perfc.predict(m, hw, train={"colour": 1})
    # FlashAttention (as --flash-attention): GPT-2's causal attention in
    # one kernel each way, no s^2 scores kept: a faster step.
    gpt = perfc.Model.from_onnx(os.path.join(ZOO, "gpt2_small.onnx"),
                                batch=2, dims={"seq": 512})
    plain = perfc.predict(gpt, hw, train={"dtype": "bf16"}, ops=False)
    flash = perfc.predict(gpt, hw, ops=False,
                          train={"dtype": "bf16", "flash_attention": True})
    assert flash["train"]["step_s"] < plain["train"]["step_s"]
    # ... and in inference: the causal blocks above the diagonal skipped.
    full = perfc.predict(gpt, hw, ops=False)
    skipped = perfc.predict(gpt, hw, ops=False, flash_attention=True)
    assert skipped["latency_s"] < full["latency_s"]
    assert '"flash_attention": true' in perfc.predict_json(
        gpt, hw, flash_attention=True)
    with pytest.raises(perfc.Error, match="no attention"):
        perfc.predict(perfc.Model.from_onnx(os.path.join(ZOO, "resnet18.onnx")),
                      hw, flash_attention=True)
    with pytest.raises(perfc.Error, match="inference option"):
        perfc.predict(gpt, hw, train={}, flash_attention=True)
    with pytest.raises(perfc.Error, match="seq"):
        perfc.Model.from_onnx(os.path.join(ZOO, "gpt2_small.onnx"))


def test_errors():
    with pytest.raises(perfc.Error, match="no-such-device"):
        perfc.load_hw("no-such-device")
    with pytest.raises(perfc.Error, match="cannot read the file"):
        perfc.Model.from_onnx("/nonexistent.onnx")
    with pytest.raises(perfc.Error):
        perfc.Model.from_onnx(b"garbage")


def test_threads_share_hw_and_model(hw):
    m = cnn(batch=8)
    ref = perfc.predict_json(m, hw)
    bad = []

    def work():
        for _ in range(20):
            if perfc.predict_json(m, hw) != ref:
                bad.append(1)

    ts = [threading.Thread(target=work) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not bad


def test_plan_is_the_clis_plan():
    dgx = perfc.load_hw("dgx-a100")
    path = os.path.join(ZOO, "gpt2_small.onnx")
    m = perfc.Model.from_onnx(path, dims={"seq": 1024})
    p = perfc.plan(m, dgx, {"global_batch": 64, "dtype": "bf16"})
    assert p["dp"] * p["tp"] * p["pp"] == dgx.devices and p["cp"] == 1
    assert p["global_batch"] == 64 and p["dtype"] == "bf16"
    # Context parallelism pinned, with FlashAttention (as --cp, --plan).
    c = perfc.plan(m, dgx, {"global_batch": 64, "dtype": "bf16",
                            "flash_attention": True, "cp": 2})
    assert c["cp"] == 2 and c["dp"] * c["tp"] * c["pp"] * 2 == dgx.devices
    # The exchange is searched too (FlashAttention runs both), or kept.
    assert c["cp_comm"] in ("p2p", "a2a")
    k = perfc.plan(m, dgx, {"global_batch": 64, "dtype": "bf16",
                            "flash_attention": True, "cp": 2,
                            "cp_comm": "p2p"})
    assert k["cp"] == 2 and k["cp_comm"] == "p2p"
    # DeepSpeed's all-to-all by default there, FlashAttention or not.
    d = perfc.plan(m, dgx, {"global_batch": 64, "dtype": "bf16",
                            "framework": "deepspeed", "cp": 2})
    assert d["cp"] == 2 and d["cp_comm"] == "a2a"
    # A plan fits what the runtime's reserve leaves.
    r = perfc.plan(m, dgx, {"global_batch": 64, "dtype": "bf16",
                            "memory_reserve_bytes": 70 * 2 ** 30},
                   report=True)
    assert r["hardware"]["memory_reserve_bytes"] == 70 * 2 ** 30
    assert r["memory"]["peak_bytes"] <= r["memory"]["capacity_bytes"]
    assert r["memory"]["capacity_bytes"] == 10 * 2 ** 30
    assert p["optimal"] is True
    assert p["predicted"]["step_time_s"] > 0
    assert len(p["stages"]) == p["pp"] * p["vp"] or len(p["stages"]) == p["pp"]
    exe = os.environ.get("PERFC_BIN")
    if exe:
        cli = json.loads(subprocess.run(
            [exe, path, "--dim", "seq=1024", "--hw", "dgx-a100", "--train",
             "--global-batch", "64", "--dtype", "bf16", "--plan", "--format",
             "json"], check=True, capture_output=True, text=True).stdout)
        # Without timings both are the same bytes from run to run.
        assert cli["plan"] == p
    assert "solve_s" not in p["search"]
    timed = perfc.plan(m, dgx, {"global_batch": 64, "dtype": "bf16",
                                "timings": True})
    assert timed["search"]["solve_s"] >= 0
    assert timed["search"]["evaluate_s"] > 0
    # Keyword arguments work as the options dict does; pins are kept.
    q = perfc.plan(m, dgx, global_batch=64, dtype="bf16", tp=2, top=3,
                   pareto=True, report=True)
    assert q["plan"]["tp"] == 2
    assert len(q["plans"]) >= 1 and len(q["pareto"]) >= 1
    assert q["step"]["time_s"] == pytest.approx(
        q["plan"]["predicted"]["step_time_s"])
    s = perfc.plan_json(m, dgx, {"global_batch": 64}, compact=True)
    assert "\n" not in s and json.loads(s)["plan"]["global_batch"] == 64
    # Only strategies DeepSpeed runs: no ZeRO 2 or 3 with pipeline stages.
    d = perfc.plan(m, dgx, global_batch=64, dtype="bf16", top=10,
                   framework="deepspeed", report=True)
    assert d["plan"]["search"]["framework"] == "deepspeed"
    for c in [d["plan"]] + d["plans"]:
        assert c["pp"] == 1 or c["zero"] <= 1
        assert c["vp"] == 1


def zoo_model(tmp_path, *args):
    """`perfc zoo ARGS` written under tmp_path: (the perfc binary, the
    model's path); skips the test without PERFC_BIN."""
    exe = os.environ.get("PERFC_BIN")
    if not exe:
        pytest.skip("needs PERFC_BIN to write the model")
    path = str(tmp_path / "zoo.onnx")
    subprocess.run([exe, "zoo", *args, "-o", path], check=True,
                   capture_output=True)
    return exe, path


def test_plan_report_has_no_inference_memory(tmp_path):
    # 25.8 B parameters: the fp32 forward alone (103 GB) overflows one
    # A100, but the plan's step (bf16 over 8 GPUs) fits. The plan's report
    # is a step's: no inference memory, and no warning that one run does
    # not fit; plain predict() keeps both.
    _, path = zoo_model(tmp_path, "gpt", "--layers", "8", "--hidden",
                        "16384", "--heads", "128", "--seq", "512", "--vocab",
                        "1000")
    m = perfc.Model.from_onnx(path, batch=1)
    dgx = perfc.load_hw("dgx-a100")
    r = perfc.plan(m, dgx, {"global_batch": 8, "dtype": "bf16"}, report=True)
    assert r["memory"]["fits"] and "stage" in r["memory"]
    assert not [w for w in r["warnings"] if "one run needs" in w["message"]]
    d = perfc.predict(m, dgx, ops=False)
    assert d["memory"]["fits"] is False
    assert [w for w in d["warnings"] if "one run needs" in w]


def test_expert_parallel_serving_is_the_clis(tmp_path):
    # ep=4 serves a mixture over 4 GPUs of a DGX: attention on a quarter
    # of the batch, a quarter of the experts, two all-to-alls per mixture.
    exe, path = zoo_model(tmp_path, "llama", "--layers", "2", "--hidden",
                          "256", "--heads", "4", "--ffn", "512", "--experts",
                          "8", "--top-k", "2", "--seq", "1", "--past", "31",
                          "--vocab", "1000", "--batch", "8")
    m = perfc.Model.from_onnx(path)
    dgx = perfc.load_hw("dgx-h100")
    one = perfc.predict(m, dgx, ops=False)
    four = perfc.predict(m, dgx, ops=False, ep=4)
    assert "expert_parallel" not in one
    ep = four["expert_parallel"]
    assert ep["degree"] == 4 and ep["link"] == "nvswitch"
    assert ep["all_to_alls"] == 2 * 2 and ep["all_to_all_bytes"] > 0
    assert four["latency_s"] == pytest.approx(ep["kernels_s"] + ep["comm_s"])
    assert four["memory"]["weights_bytes"] < one["memory"]["weights_bytes"]
    cli = subprocess.run([exe, path, "--hw", "dgx-h100", "--ep", "4",
                          "--format", "json"], check=True,
                         capture_output=True, text=True).stdout
    assert perfc.predict_json(m, dgx, ep=4) == cli
    with pytest.raises(perfc.Error, match="does not divide the 8 experts"):
        perfc.predict(m, dgx, ep=3)
    with pytest.raises(perfc.Error, match="give one of them"):
        perfc.predict(m, dgx, ep=2, tp=2)
    # Training it with the all-to-alls beside another micro-batch's
    # kernels (as --overlap-moe-expert-parallel-comm): part hidden.
    base = {"dp": 8, "ep": 4, "dtype": "bf16", "global_batch": 256}
    serial = json.loads(perfc.predict_json(m, dgx, train=base))
    paired = json.loads(perfc.predict_json(
        m, dgx, train=dict(base, overlap_moe_expert_parallel_comm=True)))
    assert paired["strategy"]["overlap_moe_expert_parallel_comm"] is True
    assert paired["step"]["ep_overlapped_s"] > 0
    assert paired["step"]["time_s"] < serial["step"]["time_s"]
    # Selective recomputation of the experts' activation and the norms (as
    # --recompute-modules): a list or a comma-separated string, the CLI's
    # bytes; less kept than without, a module the model lacks an error.
    kept = json.loads(perfc.predict_json(
        m, dgx, train=dict(base, recompute_modules=["moe_act", "layernorm"])))
    assert kept["strategy"]["recompute"] == "selective"
    assert kept["strategy"]["recompute_modules"] == ["layernorm", "moe_act"]
    assert (kept["memory"]["activations_bytes"] <
            serial["memory"]["activations_bytes"])
    cli = subprocess.run([exe, path, "--hw", "dgx-h100", "--batch", "8",
                          "--train", "--dp", "8", "--ep", "4", "--dtype", "bf16",
                          "--global-batch", "256", "--recompute-modules",
                          "layernorm,moe_act", "--format", "json"],
                         check=True, capture_output=True, text=True).stdout
    assert perfc.predict_json(
        m, dgx, train=dict(base, recompute_modules="layernorm, moe_act")) == cli
    with pytest.raises(perfc.Error, match="the model has no latent attention"):
        perfc.predict(m, dgx, train=dict(base, recompute_modules="mla_up_proj"))
    # A blank entry is refused, as the CLI and perfc batch refuse it.
    with pytest.raises(perfc.Error, match="unknown recompute module ''"):
        perfc.predict(m, dgx, train=dict(base, recompute_modules="moe_act,,"))


def test_recompute_layers_is_the_clis():
    # Full recomputation of the first 2 blocks of each chunk (as
    # --recompute-method block --recompute-num-layers 2): the CLI's bytes;
    # the plan keeps a pinned choice; no blocks at all is refused.
    exe = os.environ.get("PERFC_BIN")
    if not exe:
        pytest.skip("needs PERFC_BIN to compare with the CLI")
    dgx = perfc.load_hw("dgx-a100")
    path = os.path.join(ZOO, "gpt2_small.onnx")
    m = perfc.Model.from_onnx(path, dims={"seq": 128})
    train = dict(pp=2, dp=4, dtype="bf16", global_batch=32,
                 recompute_method="block", recompute_num_layers=2)
    j = perfc.predict_json(m, dgx, train=train)
    cli = subprocess.run([exe, path, "--dim", "seq=128", "--hw", "dgx-a100",
                          "--train", "--pp", "2", "--dp", "4", "--dtype",
                          "bf16", "--global-batch", "32", "--recompute-method",
                          "block", "--recompute-num-layers", "2", "--format",
                          "json"], check=True, capture_output=True,
                         text=True).stdout
    assert j == cli
    strategy = json.loads(j)["strategy"]
    assert strategy["recompute"] == "full"
    assert strategy["recompute_method"] == "block"
    assert strategy["recompute_num_layers"] == 2
    p = perfc.plan(m, dgx, {"global_batch": 64, "dtype": "bf16", "pp": 2,
                            "recompute_method": "block",
                            "recompute_num_layers": 3})
    assert p["recompute"] == "full" and p["recompute_method"] == "block"
    assert p["recompute_num_layers"] == 3
    with pytest.raises(ValueError, match="recompute_num_layers must be at "
                                         "least 1"):
        perfc.predict(m, dgx, train={"recompute_num_layers": 0})
    with pytest.raises(perfc.Error, match="recomputation here is selective"):
        perfc.predict(m, dgx, train={"recompute": "selective",
                                     "recompute_method": "uniform"})


def test_pipeline_parallel_inference_is_the_clis(tmp_path):
    # pp=2 (with tp=2) splits a decoding step's 4 layers into two stages of
    # two GPUs: the dict has the CLI's pipeline_parallel figures, the
    # latency is one batch's pass through both, and predict_json is the
    # CLI's bytes.
    exe, path = zoo_model(tmp_path, "llama", "--layers", "4", "--hidden",
                          "512", "--heads", "8", "--seq", "1", "--past", "31",
                          "--vocab", "1000", "--batch", "2")
    m = perfc.Model.from_onnx(path)
    dgx = perfc.load_hw("dgx-a100")
    d = perfc.predict(m, dgx, ops=False, tp=2, pp=2)
    pp = d["pipeline_parallel"]
    assert pp["degree"] == 2 and pp["in_flight_batches"] == 2
    assert [(s["first_block"], s["last_block"]) for s in pp["stages"]] == [
        (1, 2), (3, 4)]
    assert d["latency_s"] == pytest.approx(
        sum(s["kernels_s"] + s["send_s"] for s in pp["stages"]))
    assert pp["interval_s"] == max(s["time_s"] for s in pp["stages"])
    assert pp["stages"][0]["send_bytes"] == 2 * 512 * 4 / 2
    assert d["memory"]["peak_bytes"] == max(
        s["peak_bytes"] for s in pp["stages"])
    cli = subprocess.run([exe, path, "--hw", "dgx-a100", "--tp", "2", "--pp",
                          "2", "--format", "json"], check=True,
                         capture_output=True, text=True).stdout
    assert perfc.predict_json(m, dgx, tp=2, pp=2) == cli
    with pytest.raises(perfc.Error, match="the model has 4 blocks"):
        perfc.predict(m, dgx, pp=8)
    with pytest.raises(perfc.Error, match="training step's pipeline"):
        perfc.predict(m, dgx, pp=2, train={"dp": 1})
    with pytest.raises(perfc.Error, match="servePlan chooses the layout"):
        perfc.predict(m, dgx, serve_plan=True, pp=2)


def test_tensor_parallel_inference_is_the_clis(tmp_path):
    # tp=4 splits a decoding step over 4 GPUs of a DGX: the dict has the
    # CLI's tensor_parallel figures, the latency adds the exchanges to one
    # rank's kernels, and each rank holds about a quarter of the weights.
    exe, path = zoo_model(tmp_path, "llama", "--layers", "2", "--hidden",
                          "512", "--heads", "8", "--seq", "1", "--past", "31",
                          "--vocab", "1000", "--batch", "1")
    m = perfc.Model.from_onnx(path)
    dgx = perfc.load_hw("dgx-a100")
    one = perfc.predict(m, dgx, ops=False)
    four = perfc.predict(m, dgx, ops=False, tp=4)
    assert "tensor_parallel" not in one
    tp = four["tensor_parallel"]
    assert tp["degree"] == 4 and tp["link"] == "nvswitch-gen2"
    assert tp["all_reduces"] == 2 * 2 + 1 and tp["all_gathers"] == 1
    assert four["latency_s"] == pytest.approx(tp["kernels_s"] + tp["comm_s"])
    w1, w4 = one["memory"]["weights_bytes"], four["memory"]["weights_bytes"]
    assert w1 / 4 < w4 < w1 / 4 * 1.05
    cli = subprocess.run([exe, path, "--hw", "dgx-a100", "--tp", "4",
                          "--format", "json"], check=True,
                         capture_output=True, text=True).stdout
    assert perfc.predict_json(m, dgx, tp=4) == cli
    # Its exchanges under the textbook forms, as --comm-protocol: the same
    # figures as the CLI's, cheaper than NCCL's small-message costs.
    cli_ab = subprocess.run([exe, path, "--hw", "dgx-a100", "--tp", "4",
                             "--comm-protocol", "alpha-beta", "--format",
                             "json"], check=True, capture_output=True,
                            text=True).stdout
    assert perfc.predict_json(m, dgx, tp=4, comm_protocol="alpha-beta") == cli_ab
    ab = perfc.predict(m, dgx, ops=False, tp=4, comm_protocol="alpha-beta")
    assert ab["tensor_parallel"]["comm_s"] < tp["comm_s"]
    with pytest.raises(perfc.Error, match="unknown comm protocol 'ring'"):
        perfc.predict(m, dgx, tp=4, comm_protocol="ring")
    with pytest.raises(perfc.Error, match="splits the model over 16"):
        perfc.predict(m, dgx, tp=16)
    with pytest.raises(perfc.Error, match="training step's tensor"):
        perfc.predict(m, dgx, tp=2, train={"dp": 1})
    # serve_plan, as --plan without --train: every layout up to the node,
    # the fastest that fits predicted, the CLI's JSON byte for byte.
    served = perfc.predict(m, dgx, ops=False, serve_plan=True)
    sp = served["serving_plan"]
    assert [c["split"] for c in sp["candidates"]] == ["whole", "tp", "tp", "tp"]
    assert all(c["max_batch"] >= 0 for c in sp["candidates"])
    fastest = min(sp["candidates"], key=lambda c: c["latency_s"])
    assert sp["chosen"] == {"split": fastest["split"],
                            "devices": fastest["devices"], "pp": 1}
    assert served["latency_s"] == pytest.approx(fastest["latency_s"])
    cli_plan = subprocess.run([exe, path, "--hw", "dgx-a100", "--plan",
                               "--devices", "4", "--format", "json"],
                              check=True, capture_output=True,
                              text=True).stdout
    assert perfc.predict_json(m, dgx, serve_plan=True,
                              serve_plan_devices=4) == cli_plan
    with pytest.raises(perfc.Error, match="servePlan chooses the layout"):
        perfc.predict(m, dgx, serve_plan=True, tp=2)
    # serve_plan_objective="throughput" (as --objective): the most samples
    # per device; serve_plan_max_latency_s (as --max-latency) bounds it.
    cheap = perfc.predict(m, dgx, ops=False, serve_plan=True,
                          serve_plan_objective="throughput")["serving_plan"]
    best = max(cheap["candidates"],
               key=lambda c: c["samples_per_s_per_device"])
    assert cheap["objective"] == "throughput"
    assert cheap["chosen"] == {"split": best["split"],
                               "devices": best["devices"], "pp": 1}
    cli_cheap = subprocess.run([exe, path, "--hw", "dgx-a100", "--plan",
                                "--objective", "throughput", "--max-latency",
                                "1 s", "--format", "json"], check=True,
                               capture_output=True, text=True).stdout
    assert perfc.predict_json(m, dgx, serve_plan=True,
                              serve_plan_objective="throughput",
                              serve_plan_max_latency_s=1.0) == cli_cheap
    with pytest.raises(perfc.Error, match="no layout that fits meets"):
        perfc.predict(m, dgx, serve_plan=True, serve_plan_max_latency_s=1e-9)
    with pytest.raises(perfc.Error, match="set servePlan"):
        perfc.predict(m, dgx, serve_plan_objective="throughput")


def test_max_batch_is_the_clis(tmp_path):
    # max_batch (as --max-batch): the model imported again at each batch
    # tried, the prediction the largest that fits; batch_search lists the
    # batches, and predict_json is the CLI's bytes, with a latency bound
    # and in a serving plan too.
    exe, path = zoo_model(tmp_path, "llama", "--layers", "2", "--hidden",
                          "512", "--heads", "8", "--seq", "1", "--past",
                          "2047", "--vocab", "1000", "--batch", "1")
    m = perfc.Model.from_onnx(path)
    a100 = perfc.load_hw("a100-sxm4-80gb")

    def cli(*args):
        return subprocess.run([exe, path, *args, "--format", "json"],
                              check=True, capture_output=True,
                              text=True).stdout

    d = perfc.predict(m, a100, ops=False, max_batch=True)
    bs = d["batch_search"]
    admitted = [t["batch"] for t in bs["tried"] if t["fits"]]
    assert bs["batch"] == max(admitted) > 1000 and bs["from_batch"] == 1
    assert bs["batch"] + 1 in [t["batch"] for t in bs["tried"]
                               if not t["fits"]]
    assert d["memory"]["fits"] and "meets_latency" not in bs["tried"][0]
    assert perfc.predict_json(m, a100, max_batch=True) == cli(
        "--hw", "a100-sxm4-80gb", "--max-batch")
    # The model's own handle is untouched; the prediction's is at the batch.
    assert m.batch == 1

    # A bound: the largest batch whose step meets it, below memory's.
    bound = d["latency_s"] / 2
    fast = perfc.predict(m, a100, ops=False, max_batch=True,
                         max_latency_s=bound)
    fb = fast["batch_search"]
    assert fb["max_latency_s"] == bound and fb["batch"] < bs["batch"]
    assert fast["latency_s"] <= bound
    assert all(t["meets_latency"] == (t["latency_s"] <= bound)
               for t in fb["tried"])
    assert perfc.predict_json(m, a100, max_batch=True,
                              max_latency_s=0.001) == cli(
        "--hw", "a100-sxm4-80gb", "--max-batch", "--max-latency", "1 ms")

    # A serving plan at each layout's largest batch.
    dgx = perfc.load_hw("dgx-a100")
    plan = perfc.predict(m, dgx, ops=False, serve_plan=True,
                         serve_plan_devices=4, max_batch=True)
    sp = plan["serving_plan"]
    assert sp["at_max_batch"] and sp["objective"] == "throughput"
    assert all(c["at_max_batch"] for c in sp["candidates"])
    best = max(sp["candidates"], key=lambda c: c["samples_per_s_per_device"])
    assert sp["chosen"] == {"split": best["split"],
                            "devices": best["devices"], "pp": best["pp"]}
    assert plan["batch_search"]["batch"] == best["samples"]
    assert perfc.predict_json(m, dgx, serve_plan=True, serve_plan_devices=4,
                              max_batch=True) == cli(
        "--hw", "dgx-a100", "--plan", "--devices", "4", "--max-batch")
    assert perfc.predict_json(m, dgx, serve_plan=True, serve_plan_devices=4,
                              max_batch=True, max_latency_s=0.001) == cli(
        "--hw", "dgx-a100", "--plan", "--devices", "4", "--max-batch",
        "--max-latency", "1 ms")

    with pytest.raises(perfc.Error, match="made with ModelBuilder has one"):
        perfc.predict(cnn(), a100, max_batch=True)
    with pytest.raises(perfc.Error, match="set maxBatch"):
        perfc.predict(m, a100, max_latency_s=0.001)
    with pytest.raises(perfc.Error, match="maxBatch needs hardware"):
        perfc.predict(m, None, max_batch=True)
    with pytest.raises(perfc.Error, match="training step's micro-batch"):
        perfc.predict(m, a100, max_batch=True, train={"dp": 1})
    with pytest.raises(perfc.Error, match="give the bound once"):
        perfc.predict(m, dgx, serve_plan=True, max_batch=True,
                      max_latency_s=0.001, serve_plan_max_latency_s=0.002)
    with pytest.raises(perfc.Error, match="positive number of seconds"):
        perfc.predict(m, a100, max_batch=True, max_latency_s=0.0)
    with pytest.raises(perfc.Error, match="not even a batch of 1 meets"):
        perfc.predict(m, a100, max_batch=True, max_latency_s=1e-9)


def test_training_json_explains_its_communication():
    """predict_json gives the CLI's JSON: each collective behind the step's
    communication with its formula, counts adding up to tp_comm_s."""
    dgx = perfc.load_hw("dgx-a100")
    m = perfc.Model.from_onnx(os.path.join(ZOO, "gpt2_small.onnx"),
                              dims={"seq": 128})
    j = json.loads(perfc.predict_json(
        m, dgx, train={"tp": 2, "dp": 4, "global_batch": 8}))
    lines = j["step"]["comm_explain"]
    assert lines[0].startswith("tp 2, stage 0, per micro-batch: ")
    assert "ring all-reduce, 2 ranks on 1 node" in lines[0]
    assert any(l.startswith("dp 4: ") for l in lines)
    # The protocol as --comm-protocol: NCCL's pick by default, or pinned.
    assert j["strategy"]["comm_protocol"] == "auto"
    pinned = json.loads(perfc.predict_json(
        m, dgx, train={"tp": 2, "dp": 4, "global_batch": 8,
                       "comm_protocol": "Simple"}))
    assert pinned["strategy"]["comm_protocol"] == "Simple"
    assert "NCCL Simple" in pinned["step"]["comm_explain"][0]
    assert pinned["step"]["tp_comm_s"] > j["step"]["tp_comm_s"]
    # Overlapped tensor-parallel exchanges, as --tp-comm-overlap.
    sp = {"tp": 2, "dp": 4, "global_batch": 8, "sp": True}
    plain = json.loads(perfc.predict_json(m, dgx, train=sp))
    over = json.loads(perfc.predict_json(
        m, dgx, train=dict(sp, tp_comm_overlap=True)))
    assert over["strategy"]["tp_comm_overlap"] is True
    assert over["step"]["tp_overlapped_s"] > 0
    assert over["step"]["time_s"] < plain["step"]["time_s"]
    with pytest.raises(perfc.Error, match="add --sp"):
        perfc.predict(m, dgx, train={"tp": 2, "tp_comm_overlap": True})
    # Context parallelism, as --cp: the ring's exchanges, eight devices.
    cp = json.loads(perfc.predict_json(
        m, dgx, train={"cp": 2, "dp": 4, "global_batch": 8,
                       "flash_attention": True}))
    assert cp["strategy"]["cp"] == 2
    assert cp["strategy"]["devices"] == 8
    assert cp["step"]["cp_overlapped_s"] + cp["step"]["cp_comm_s"] > 0
    with pytest.raises(perfc.Error, match="add --flash-attention"):
        perfc.predict(m, dgx, train={"cp": 2, "global_batch": 2})
    # The all-to-all (as --cp-comm a2a): no FlashAttention, all exposed.
    a2a = json.loads(perfc.predict_json(
        m, dgx, train={"cp": 2, "cp_comm": "a2a", "dp": 4,
                       "global_batch": 8}))
    assert a2a["strategy"]["cp_comm"] == "a2a"
    assert a2a["step"]["cp_comm_s"] > 0
    assert a2a["step"]["cp_overlapped_s"] == 0
    with pytest.raises(perfc.Error, match="unknown cp comm 'ring'"):
        perfc.predict(m, dgx, train={"cp": 2, "cp_comm": "ring"})
    # Expert parallelism (as --ep) needs a mixture of experts.
    with pytest.raises(perfc.Error, match="no mixture of experts"):
        perfc.predict(m, dgx, train={"dp": 2, "ep": 2})
    with pytest.raises(perfc.Error, match="--moe-capacity 2: the model has "
                                          "no mixture of experts"):
        perfc.predict(m, dgx, train={"moe_capacity": 2.0})
    # As --overlap-param-gather: ZeRO 1's gather waited for less.
    z1 = {"dp": 8, "zero": 1, "global_batch": 8}
    after = json.loads(perfc.predict_json(m, dgx, train=z1))
    during = json.loads(perfc.predict_json(
        m, dgx, train=dict(z1, overlap_param_gather=True)))
    assert during["strategy"]["overlap_param_gather"] is True
    assert during["step"]["dp_exposed_s"] < after["step"]["dp_exposed_s"]
    # The runtime's reserve (as --memory-reserve): taken from the capacity.
    full = json.loads(perfc.predict_json(m, dgx, train={"global_batch": 1}))
    kept = json.loads(perfc.predict_json(
        m, dgx, train={"global_batch": 1}, memory_reserve_bytes=2 ** 32))
    assert kept["hardware"]["memory_reserve_bytes"] == 2 ** 32
    assert (kept["memory"]["capacity_bytes"]
            == full["memory"]["capacity_bytes"] - 2 ** 32)
    with pytest.raises(perfc.Error, match="leaves nothing of a100-sxm4-80gb"):
        perfc.predict(m, dgx, memory_reserve_bytes=1e12)


def test_plan_errors():
    dgx = perfc.load_hw("dgx-a100")
    m = cnn(batch=2)
    with pytest.raises(perfc.Error, match="needs globalBatch"):
        perfc.plan(m, dgx)
    with pytest.raises(ValueError, match="unknown plan option 'gbs'"):
        perfc.plan(m, dgx, gbs=8)
    with pytest.raises(perfc.Error,
                       match="unknown framework 'torch': use any, megatron"):
        perfc.plan(m, dgx, global_batch=16, framework="torch")
    with pytest.raises(perfc.Error, match="has one batch"):
        perfc.plan(m, dgx, global_batch=16, micro_batch=4)
    p = perfc.plan(m, dgx, global_batch=16)
    assert p["micro_batch"] == 2


def test_names_that_are_not_utf8(hw):
    """ONNX names are unchecked bytes: results and errors carry U+FFFD for
    what is not UTF-8 (a plain conversion raised UnicodeDecodeError, and an
    error lost its whole message)."""
    with open(os.path.join(ZOO, "resnet18.onnx"), "rb") as f:
        good = f.read()
    # The node name "/conv1/Conv" (NodeProto field 3) with its 'v' as 0xff.
    name = b"\x1a\x0b/conv1/Conv"
    assert good.count(name) == 1
    m = perfc.Model.from_onnx(good.replace(name, b"\x1a\x0b/conv1/Co\xffv"))
    r = perfc.predict(m, hw)
    assert "/conv1/Co\ufffdv" in [o["name"] for o in r["ops"]]
    d = json.loads(perfc.predict_json(m, hw))
    assert "/conv1/Co\ufffdv" in [n["name"] for n in d["nodes"]]
    # The Relu's input (field 1) no longer names the conv's output.
    edge = b"\x0a\x14/conv1/Conv_output_0"
    assert good.count(edge) == 1
    with pytest.raises(perfc.Error, match="reads tensor '/conv1/Co\ufffdv_output_0'"):
        perfc.Model.from_onnx(good.replace(edge, b"\x0a\x14/conv1/Co\xffv_output_0"))
