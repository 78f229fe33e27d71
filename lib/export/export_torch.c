/*
 * export_torch.c: the PyTorch side of a package: NAME/__init__.py, which
 * checks the tensors and builds the extension on first use with
 * torch.utils.cpp_extension.load, and NAME/binding.cpp, which calls the
 * launch function of NAME/csrc on PyTorch's current stream.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "export_private.h"

static const char *const torch_dtypes[] = {
    [KEVO_DTYPE_F32] = "torch.float32", [KEVO_DTYPE_F64] = "torch.float64",
    [KEVO_DTYPE_F16] = "torch.float16", [KEVO_DTYPE_BF16] = "torch.bfloat16",
    [KEVO_DTYPE_I8] = "torch.int8",     [KEVO_DTYPE_U8] = "torch.uint8",
    [KEVO_DTYPE_I16] = "torch.int16",   [KEVO_DTYPE_U16] = "\"uint16\"",
    [KEVO_DTYPE_I32] = "torch.int32",   [KEVO_DTYPE_U32] = "\"uint32\"",
    [KEVO_DTYPE_I64] = "torch.int64",   [KEVO_DTYPE_U64] = "\"uint64\"",
};

static const char *role_name(kevo_role r)
{
    return r == KEVO_ROLE_IN      ? "in"
           : r == KEVO_ROLE_OUT   ? "out"
           : r == KEVO_ROLE_INOUT ? "inout"
                                  : "scalar";
}

static kevo_status python(const kevo__export_pkg *p, kevo_buf *b,
                          kevo_error *err)
{
    const char *n = p->name;
    kevo__buf_printf(
        b,
        "\"\"\"%s: the kevo champion of task %s as a PyTorch function.\n\n"
        "Written by kevo export (see the README.md beside this folder).\n\n"
        "    import %s\n"
        "    outputs = %s.%s(*tensors_and_scalars, **dims)\n\n"
        "The arguments are the task's, in order, without the scalars that "
        "have a fixed\nvalue; the dims are keywords. The first call builds "
        "the extension.\n\"\"\"\n"
        "import os\nimport struct\n\nimport torch\n\n"
        "__all__ = [\"%s\", \"ARGS\", \"DIMS\", \"VARIANTS\", \"build\", "
        "\"plan\"]\n\n"
        "_HERE = os.path.dirname(os.path.abspath(__file__))\n"
        "ARCH = \"%s\"\n"
        "# (name, type, role, index among the task's arguments)\n"
        "ARGS = [\n",
        n, kevo_task_name(p->task), n, n, n, n, p->arch);
    size_t nargs = kevo_task_arg_count(p->task);
    for (size_t i = 0; i < nargs; i++) {
        kevo_arg_info info = {.size = sizeof info};
        kevo_status rc = kevo_task_arg_info(p->task, i, &info);
        if (rc != KEVO_OK)
            return rc;
        if (info.role == KEVO_ROLE_SCALAR && info.value)
            continue;
        kevo__buf_printf(b, "    (\"%s\", \"%s\", \"%s\", %zu),\n", info.name,
                         kevo_dtype_name(info.type), role_name(info.role), i);
    }
    kevo__buf_puts(b, "]\nDIMS = [");
    for (size_t i = 0; i < kevo__export_ndims(p); i++)
        kevo__buf_printf(b, "%s\"%s\"", i ? ", " : "",
                         kevo_task_dim_name(p->task, i));
    kevo__buf_printf(b,
                     "]\n_NARGS = %zu\n_SOURCES = [\"binding.cpp\", "
                     "\"csrc/%s.cu\", \"csrc/%s_plan.cpp\"",
                     nargs, n, n);
    for (size_t v = 0; v < p->nvariants; v++)
        kevo__buf_printf(b, ", \"csrc/%s_v%zu.cu\"", n, v);
    kevo__buf_puts(
        b, "]\n# The parameters of each variant; ext.plan() says which runs.\n"
           "VARIANTS = [\n");
    for (size_t v = 0; v < p->nvariants; v++) {
        const kevo_vars *a = kevo_candidate_assignment(p->variants[v]);
        kevo__buf_puts(b, "    {");
        for (size_t i = 0; i < kevo_vars_count(a); i++)
            kevo__buf_printf(b, "%s\"%s\": %lld", i ? ", " : "",
                             kevo_vars_name(a, i),
                             (long long)kevo_vars_value(a, i));
        kevo__buf_puts(b, "},\n");
    }
    kevo__buf_puts(b, "]\n_DTYPES = {\n");
    for (size_t t = 0; t < KEVO_ARRAY_SIZE(torch_dtypes); t++) {
        const char *d = torch_dtypes[t];
        if (d[0] == '"')
            kevo__buf_printf(b, "    \"%s\": getattr(torch, %s, None),\n",
                             kevo_dtype_name((kevo_dtype)t), d);
        else
            kevo__buf_printf(b, "    \"%s\": %s,\n",
                             kevo_dtype_name((kevo_dtype)t), d);
    }
    kevo__buf_printf(
        b,
        "}\n_INT_RANGE = {\"i8\": (-2**7, 2**7 - 1), \"u8\": (0, 2**8 - 1),\n"
        "              \"i16\": (-2**15, 2**15 - 1), \"u16\": (0, 2**16 - 1),\n"
        "              \"i32\": (-2**31, 2**31 - 1), \"u32\": (0, 2**32 - 1),\n"
        "              \"i64\": (-2**63, 2**63 - 1), \"u64\": (0, 2**64 - 1)}\n"
        "_ext = None\n\n\n"
        "def build(verbose=False):\n"
        "    \"\"\"Builds (once) and returns the extension.\"\"\"\n"
        "    global _ext\n"
        "    if _ext is None:\n"
        "        from torch.utils.cpp_extension import load\n"
        "        csrc = os.path.join(_HERE, \"csrc\")\n"
        "        # An -arch flag of our own keeps PyTorch from adding its own: "
        "the\n"
        "        # kernel is built for the target kevo measured it on.\n"
        "        _ext = load(name=\"%s_kevo\",\n"
        "                    sources=[os.path.join(_HERE, s) for s in "
        "_SOURCES],\n"
        "                    extra_include_paths=[csrc],\n"
        "                    extra_cflags=[\"-O3\", \"-std=c++17\"],\n"
        "                    extra_cuda_cflags=[\"-O3\", \"-std=c++17\", "
        "\"-arch=\" + ARCH,\n"
        "                                       "
        "\"--expt-relaxed-constexpr\"],\n"
        "                    verbose=verbose)\n"
        "    return _ext\n\n\n"
        "def plan(**dims):\n"
        "    \"\"\"The plan of a call at dims on the current device: a dict "
        "with the\n"
        "    variant that runs, its parameters and the workspace bytes.\"\"\"\n"
        "    p = build().plan([int(dims[d]) for d in DIMS])\n"
        "    return {\"variant\": p[-1], \"params\": VARIANTS[p[-1]],\n"
        "            \"workspace_bytes\": p[-2]}\n\n\n"
        "def _bits(name, typ, value):\n"
        "    \"\"\"A scalar as the bits of its type, in a signed 64-bit "
        "integer.\"\"\"\n"
        "    if isinstance(value, torch.Tensor):\n"
        "        value = value.item()\n"
        "    if typ == \"f32\":\n"
        "        b = struct.unpack(\"<I\", struct.pack(\"<f\", "
        "float(value)))[0]\n"
        "    elif typ == \"f64\":\n"
        "        b = struct.unpack(\"<Q\", struct.pack(\"<d\", "
        "float(value)))[0]\n"
        "    elif typ == \"f16\":\n"
        "        b = struct.unpack(\"<H\", struct.pack(\"<e\", "
        "float(value)))[0]\n"
        "    elif typ == \"bf16\":\n"
        "        t = torch.tensor([float(value)], dtype=torch.bfloat16)\n"
        "        b = t.view(torch.int16).item() & 0xFFFF\n"
        "    else:\n"
        "        lo, hi = _INT_RANGE[typ]\n"
        "        if int(value) != value or not lo <= int(value) <= hi:\n"
        "            raise ValueError(f\"%s: scalar '{name}' ({typ}) must be "
        "an integer in \"\n"
        "                             f\"[{lo}, {hi}], got {value!r}\")\n"
        "        b = int(value) & 0xFFFFFFFFFFFFFFFF\n"
        "    return b - 2**64 if b >= 2**63 else b\n\n\n",
        n, n);
    kevo__buf_printf(
        b,
        "def %s(*args, **dims):\n"
        "    \"\"\"Runs the champion on the current CUDA stream and returns "
        "its outputs\n"
        "    (a tensor, or a tuple of them).\"\"\"\n"
        "    names = \", \".join(a[0] for a in ARGS)\n"
        "    if len(args) != len(ARGS):\n"
        "        raise TypeError(f\"%s() takes {len(ARGS)} arguments \"\n"
        "                        f\"({names}) and the dims {DIMS} as keywords, "
        "\"\n"
        "                        f\"got {len(args)} arguments\")\n"
        "    if sorted(dims) != sorted(DIMS):\n"
        "        raise TypeError(f\"%s() takes the dims {DIMS} as keywords, "
        "got "
        "\"\n"
        "                        f\"{sorted(dims)}\")\n"
        "    dimv = [int(dims[d]) for d in DIMS]\n"
        "    tensors, scalars, device, first = [], [], None, None\n"
        "    for (name, typ, role, index), value in zip(ARGS, args):\n"
        "        if role == \"scalar\":\n"
        "            scalars.append(_bits(name, typ, value))\n"
        "            continue\n"
        "        want = _DTYPES[typ]\n"
        "        if not isinstance(value, torch.Tensor):\n"
        "            raise TypeError(f\"%s: argument '{name}' must be a tensor "
        "of {want}, \"\n"
        "                            f\"got {type(value).__name__}\")\n"
        "        if want is None or value.dtype != want:\n"
        "            raise TypeError(f\"%s: argument '{name}' must have dtype "
        "{want} \"\n"
        "                            f\"({typ}), got {value.dtype}\")\n"
        "        if value.device.type != \"cuda\":\n"
        "            raise ValueError(f\"%s: argument '{name}' must be on a "
        "CUDA device, \"\n"
        "                             f\"got {value.device}\")\n"
        "        if device is None:\n"
        "            device, first = value.device, name\n"
        "        elif value.device != device:\n"
        "            raise ValueError(f\"%s: argument '{name}' is on "
        "{value.device} and \"\n"
        "                             f\"'{first}' on {device}: all tensors "
        "must be on one device\")\n"
        "        if not value.is_contiguous():\n"
        "            raise ValueError(f\"%s: argument '{name}' must be "
        "contiguous \"\n"
        "                             f\"(pass {name}.contiguous())\")\n"
        "        if value.data_ptr() %% 16 != 0:\n"
        "            raise ValueError(f\"%s: argument '{name}' must be 16-byte "
        "aligned \"\n"
        "                             f\"(its data starts at "
        "{value.data_ptr():#x}; a fresh \"\n"
        "                             f\"tensor or {name}.clone() is)\")\n"
        "        tensors.append((name, role, index, value))\n"
        "    if device is None:\n"
        "        device = torch.device(\"cuda\", torch.cuda.current_device())\n"
        "    ext = build()\n"
        "    with torch.cuda.device(device):\n"
        "        plan = ext.plan(dimv)\n"
        "        for name, role, index, t in tensors:\n"
        "            if t.numel() != plan[index]:\n"
        "                raise ValueError(f\"%s: argument '{name}' has "
        "{t.numel()} elements; \"\n"
        "                                 f\"the shape {dims} needs "
        "{plan[index]}\")\n"
        "        workspace = torch.empty(plan[_NARGS], dtype=torch.uint8, "
        "device=device)\n"
        "        ext.run([t for _, _, _, t in tensors], scalars, dimv, "
        "workspace)\n"
        "    outs = [t for _, role, _, t in tensors if role in (\"out\", "
        "\"inout\")]\n"
        "    return outs[0] if len(outs) == 1 else tuple(outs)\n",
        n, n, n, n, n, n, n, n, n, n);
    return KEVO_OK;
}

static kevo_status binding(const kevo__export_pkg *p, kevo_buf *b,
                           kevo_error *err)
{
    const char *n = p->name;
    size_t nargs = kevo_task_arg_count(p->task), nt = 0, ns = 0;
    kevo__buf_printf(
        b,
        "// binding.cpp: the PyTorch binding of the %s package, written by "
        "kevo export.\n"
        "#include <cstring>\n#include <vector>\n\n"
        "#include <ATen/cuda/CUDAContext.h>\n#include <torch/extension.h>\n\n"
        "#include \"%s.h\"\n\n"
        "// Per task argument: a buffer's element count, then the workspace "
        "bytes and\n// the variant.\n"
        "static std::vector<int64_t> plan(std::vector<int64_t> dims)\n"
        "{\n"
        "    TORCH_CHECK(dims.size() == %zu, \"%s: %zu dims expected\");\n"
        "    %s_props props;\n"
        "    cudaError_t e = %s_device_props(&props);\n"
        "    TORCH_CHECK(e == cudaSuccess, \"%s: \", cudaGetErrorString(e));\n"
        "    %s_plan_t p;\n"
        "    TORCH_CHECK(%s_plan_dims(dims.data(), &props, &p) == 0, \"%s: \", "
        "p.error);\n"
        "    std::vector<int64_t> out(p.count, p.count + %zu);\n"
        "    out.push_back((int64_t)p.workspace_bytes);\n"
        "    out.push_back(p.variant);\n"
        "    return out;\n"
        "}\n\n"
        "static void run(std::vector<at::Tensor> t, std::vector<int64_t> s,\n"
        "                std::vector<int64_t> dims, at::Tensor workspace)\n"
        "{\n",
        n, n, kevo__export_ndims(p), n, kevo__export_ndims(p), n, n, n, n, n, n,
        nargs);
    kevo_buf call = {0};
    kevo__buf_printf(&call, "    cudaError_t e = %s(", n);
    for (size_t i = 0; i < nargs; i++) {
        kevo_arg_info info = {.size = sizeof info};
        kevo_status rc = kevo_task_arg_info(p->task, i, &info);
        if (rc != KEVO_OK) {
            kevo__buf_free(&call);
            return rc;
        }
        const char *ct = kevo__export_ctype(info.type);
        bool half = info.type == KEVO_DTYPE_F16 || info.type == KEVO_DTYPE_BF16;
        if (info.role == KEVO_ROLE_SCALAR) {
            if (info.value)
                continue;
            kevo__buf_printf(b,
                             "    %s s%zu;\n"
                             "    std::memcpy(&s%zu, &s[%zu], sizeof s%zu);\n",
                             ct, ns, ns, ns, ns);
            kevo__buf_printf(&call, "s%zu, ", ns++);
        } else {
            kevo__buf_printf(&call, "static_cast<%s%s *>(t[%zu].data_ptr()), ",
                             info.role == KEVO_ROLE_IN ? "const " : "",
                             half ? "void" : ct, nt++);
        }
    }
    for (size_t i = 0; i < kevo__export_ndims(p); i++)
        kevo__buf_printf(&call, "dims[%zu], ", i);
    kevo__buf_puts(&call, "\n        workspace.numel() ? workspace.data_ptr() "
                          ": nullptr, (size_t)workspace.numel(), stream);\n");
    kevo__buf_printf(
        b,
        "    TORCH_CHECK(t.size() == %zu && s.size() == %zu && dims.size() == "
        "%zu,\n"
        "                \"%s: %zu tensors, %zu scalars and %zu dims "
        "expected\");\n"
        "    cudaStream_t stream = at::cuda::getCurrentCUDAStream().stream();\n"
        "%s"
        "    TORCH_CHECK(e == cudaSuccess, \"%s: \",\n"
        "                *%s_error() ? %s_error() : cudaGetErrorString(e));\n"
        "}\n\n"
        "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m)\n{\n"
        "    m.def(\"plan\", &plan, \"element counts, workspace bytes and "
        "variant at a shape\");\n"
        "    m.def(\"run\", &run, \"runs the champion on the current "
        "stream\");\n}\n",
        nt, ns, kevo__export_ndims(p), n, nt, ns, kevo__export_ndims(p),
        call.data ? call.data : "", n, n, n);
    bool failed = call.failed;
    kevo__buf_free(&call);
    return failed ? kevo__error_set(err, KEVO_ENOMEM, "out of memory")
                  : KEVO_OK;
}

kevo_status kevo__export_torch(const kevo__export_pkg *p, const char *dir,
                               kevo_error *err)
{
    kevo_buf py = {0}, cpp = {0}, plan = {0};
    kevo_status rc = python(p, &py, err);
    if (rc == KEVO_OK)
        rc = binding(p, &cpp, err);
    kevo__buf_printf(&plan,
                     "// %s_plan.cpp: %s_plan.c, compiled as C++ by PyTorch's "
                     "build.\n#include \"%s_plan.c\"\n",
                     p->name, p->name, p->name);
    char *plan_name = kevo__asprintf("csrc/%s_plan.cpp", p->name);
    if (rc == KEVO_OK && (py.failed || cpp.failed || plan.failed || !plan_name))
        rc = kevo__error_set(err, KEVO_ENOMEM, "out of memory");
    if (rc == KEVO_OK)
        rc = kevo__export_write(dir, "__init__.py", py.data, err);
    if (rc == KEVO_OK)
        rc = kevo__export_write(dir, "binding.cpp", cpp.data, err);
    if (rc == KEVO_OK)
        rc = kevo__export_write(dir, plan_name, plan.data, err);
    free(plan_name);
    kevo__buf_free(&py);
    kevo__buf_free(&cpp);
    kevo__buf_free(&plan);
    return rc;
}
