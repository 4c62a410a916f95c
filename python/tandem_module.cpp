// The Python module `tandem` (pybind11): the C++ API of include/tandem/tandem.hpp with numpy
// arrays in and out and Iris's keyword arguments. The keywords are the parameter schema's
// (tandem::api::parameters(): one name, one meaning, as on the command line), and errors name
// parameters by them ("k=1000: ...").
//
// Tensors per rank are ONE numpy array with a leading rank axis: shape (ranks, rows, cols).
// fp16 tensors take and give numpy float16; fp32 tensors float32; bf16 tensors (numpy has no
// bfloat16) take float32 values (rounded to bf16, nearest even) and give float32; int8 tensors
// take and give numpy int8.
// Every simulator error is a tandem.Error (a RuntimeError) carrying the simulator's message.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <stdexcept>

#include "tandem/tandem.hpp"

namespace py = pybind11;
using namespace tandem::api;

namespace {

DataType dtype_of(const py::object& d) {
    if (py::isinstance<py::str>(d)) return parse_data_type(d.cast<std::string>());
    const py::dtype dt = py::dtype::from_args(d);
    if (dt.is(py::dtype::of<std::uint16_t>())) throw Error("dtype uint16: give fp16 data as numpy float16");
    const std::string name = dt.attr("name").cast<std::string>();
    return parse_data_type(name);
}

// The C++ API's messages name its calls (from_host, to_host); a Python user called copy_ or
// numpy: the same message in those words.
template <typename F>
auto in_python_words(const std::string& cxx_call, const std::string& python_call, F&& f) {
    try {
        return f();
    } catch (const std::exception& e) {
        const std::string m = e.what();
        if (m.rfind(cxx_call + ":", 0) != 0) throw;
        throw Error(python_call + m.substr(cxx_call.size()));
    }
}

// (ranks, rows, cols) of a tensor's data.
py::array to_numpy_data(const Tensor& t);
py::array to_numpy(const Tensor& t) {
    return in_python_words("to_host", "numpy()", [&] { return to_numpy_data(t); });
}
py::array to_numpy_data(const Tensor& t) {
    const std::vector<py::ssize_t> shape = {t.ranks(), t.rows(), t.cols()};
    const std::size_t per = static_cast<std::size_t>(t.rows()) * static_cast<std::size_t>(t.cols());
    if (t.dtype() == DataType::F16) {
        py::array_t<std::uint16_t> bits(shape);
        for (int r = 0; r < t.ranks(); ++r) t.to_host_bits(r, bits.mutable_data(r), per * 2);
        return bits.view("float16");
    }
    if (t.dtype() == DataType::I8) {
        py::array_t<std::int8_t> ints(shape);
        for (int r = 0; r < t.ranks(); ++r) t.to_host_bits(r, ints.mutable_data(r), per);
        return ints;
    }
    py::array_t<float> out(shape);
    for (int r = 0; r < t.ranks(); ++r) {
        const std::vector<float> v = t.to_host(r);
        std::memcpy(out.mutable_data(r), v.data(), per * sizeof(float));
    }
    return out;
}

void copy_from_numpy_data(Tensor& t, const py::array& array);
void copy_from_numpy(Tensor& t, const py::array& array) {
    in_python_words("from_host", "copy_()", [&] {
        copy_from_numpy_data(t, array);
        return 0;
    });
}
void copy_from_numpy_data(Tensor& t, const py::array& array) {
    if (array.ndim() != 3 || array.shape(0) != t.ranks() || array.shape(1) != t.rows() || array.shape(2) != t.cols()) {
        std::string got = "(";
        for (py::ssize_t i = 0; i < array.ndim(); ++i) got += (i ? ", " : "") + std::to_string(array.shape(i));
        throw Error("tensor data of shape " + got + "): expected (ranks, rows, cols) = (" + std::to_string(t.ranks()) + ", " +
                    std::to_string(t.rows()) + ", " + std::to_string(t.cols()) + ")");
    }
    const std::size_t per = static_cast<std::size_t>(t.rows()) * static_cast<std::size_t>(t.cols());
    const std::string kind = py::str(array.dtype()).cast<std::string>();
    if (t.dtype() == DataType::F16) {
        if (kind != "float16") throw Error("an fp16 tensor takes numpy float16 data, not " + kind);
        auto bits = py::array_t<std::uint16_t, py::array::c_style | py::array::forcecast>(array.attr("view")("uint16"));
        for (int r = 0; r < t.ranks(); ++r) t.from_host_bits(r, bits.data(r), per * 2);
        return;
    }
    if (t.dtype() == DataType::I8) {
        if (kind != "int8") throw Error("an int8 tensor takes numpy int8 data, not " + kind);
        auto ints = py::array_t<std::int8_t, py::array::c_style | py::array::forcecast>(array);
        for (int r = 0; r < t.ranks(); ++r) t.from_host_bits(r, ints.data(r), per);
        return;
    }
    if (kind != "float32" && kind != "float16" && kind != "float64")
        throw Error(std::string("an ") + dtype_name(t.dtype()) + " tensor takes numpy float data, not " + kind);
    auto values = py::array_t<float, py::array::c_style | py::array::forcecast>(array);
    for (int r = 0; r < t.ranks(); ++r) t.from_host(r, std::span<const float>(values.data(r), per));
}

// The Python keyword of schema parameter `name` (tandem::api::parameters(): the keywords are
// the schema's, not written here).
const char* keyword(const std::string& name) {
    static const std::vector<ParameterInfo> params = parameters();
    for (const ParameterInfo& p : params) {
        if (p.name == name) return p.python_keyword.c_str();
    }
    throw std::logic_error("the parameter schema has no Python keyword for '" + name + "'");
}

// config={...}: each key sets its OpConfig field through the schema (set_config), or a knob.
OpConfig config_of(const py::object& config) {
    OpConfig c;
    if (config.is_none()) return c;
    if (!py::isinstance<py::dict>(config)) {
        std::string keys;
        for (const ParameterInfo& p : parameters()) {
            if (p.python_place == "config") keys += (keys.empty() ? "" : ", ") + p.python_keyword;
        }
        throw Error("config: a dict of " + keys + " and the variant's knobs");
    }
    for (const auto& [key_obj, value] : config.cast<py::dict>()) {
        const std::string key = py::str(key_obj);
        const std::string type = config_key_type(key);
        // One dict sets a knob once: routing="zipf:1" sets zipf_s_pct too, and a zipf_s_pct key
        // beside it would otherwise win or lose by the keys' order.
        const std::map<std::string, int> before = c.knobs;
        try {
            if (type == "int" && py::isinstance<py::bool_>(value)) throw py::cast_error();  // True is no count
            // A knob's word (routing="zipf:1.2"): set_config reads it or says what the knob takes.
            if (type == "int" && py::isinstance<py::str>(value)) set_config(c, key, value.cast<std::string>());
            else if (type == "int") set_config(c, key, value.cast<int>());
            else if (type == "flag") set_config(c, key, value.cast<bool>());
            else set_config(c, key, value.cast<std::string>());
        } catch (const py::cast_error&) {
            throw Error("config['" + key + "'] = " + py::repr(value).cast<std::string>() + ": wrong type for this key (" +
                        type + (type == "int" ? ", as a variant's knob" : "") + ")");
        }
        for (const auto& [knob, v] : c.knobs) {
            const auto it = before.find(knob);
            if (it != before.end() && it->second != v) {
                throw Error("config['" + key + "'] sets " + knob + " to " + std::to_string(v) +
                            ", which another key of this config set to " + std::to_string(it->second) + "; give it once");
            }
        }
    }
    return c;
}

// The C++ OpResults' fields under their keys (result_fields: the command line's JSON keys).
py::dict results_dict(const OpResults& r) {
    py::dict d;
    for (const auto& [key, value] : result_fields(r)) d[py::str(key)] = py::cast(value);
    return d;
}

// sanitize=True (or config["sanitize"]): the call runs under the simulator's sanitizer and raises
// tandem.Error with the count and the first violation if it breaks a synchronisation rule (an
// async call: at barrier()).
Workspace call_op(Ops& ops, const std::string& op, Tensor& out, const Tensor& a, const Tensor& b, const py::object& bias,
                  bool async_op, const py::object& config, const py::object& workspace, bool sanitize) {
    OpConfig cfg = config_of(config);
    cfg.sanitize = cfg.sanitize || sanitize;
    std::optional<Tensor> bias_t;
    if (!bias.is_none()) bias_t = bias.cast<Tensor>();
    Workspace ws = workspace.is_none() ? Workspace{} : workspace.cast<Workspace>();
    py::gil_scoped_release release;
    return ops.run(op, out, a, b, bias_t ? &*bias_t : nullptr, async_op, cfg, ws);
}

// tandem.Tensor: one buffer per rank, to and from numpy.
void bind_tensor(py::module_& m) {
    py::class_<Tensor>(m, "Tensor", "One buffer per rank in the context's symmetric memory")
        .def_property_readonly("shape", [](const Tensor& t) { return py::make_tuple(t.ranks(), t.rows(), t.cols()); })
        .def_property_readonly("dtype", [](const Tensor& t) { return std::string(dtype_name(t.dtype())); })
        .def("numpy", &to_numpy, "The data as one array of shape (ranks, rows, cols)")
        .def("copy_",
             [](Tensor& t, const py::object& a) {
                 // Any object: a wrong one is a one-line TypeError naming the argument, not pybind's
                 // list of signatures. A 2-D array is the same data on every rank.
                 if (!py::isinstance<py::array>(a))
                     throw py::type_error("copy_: array: a numpy array of shape (ranks, rows, cols) or (rows, cols), not " +
                                          py::str(py::type::of(a).attr("__name__")).cast<std::string>());
                 py::array array = py::reinterpret_borrow<py::array>(a);
                 if (array.ndim() == 2)
                     array = py::module_::import("numpy").attr("broadcast_to")(
                         array, py::make_tuple(t.ranks(), array.shape(0), array.shape(1)));
                 copy_from_numpy(t, array);
                 return t;
             },
             py::arg("array"), "Overwrite every rank's data from an array of shape (ranks, rows, cols), or (rows, cols) for "
                               "the same data on every rank")
        .def("__repr__", [](const Tensor& t) {
            return "tandem.Tensor(ranks=" + std::to_string(t.ranks()) + ", rows=" + std::to_string(t.rows()) +
                   ", cols=" + std::to_string(t.cols()) + ", dtype=" + dtype_name(t.dtype()) + ")";
        });
}

// tandem.Workspace: an op's device memory and its latest results.
void bind_workspace(py::module_& m) {
    py::class_<Workspace>(m, "Workspace", "An op's device memory for one shape and configuration; pass it back to reuse it")
        .def_property_readonly("op", &Workspace::op)
        .def_property_readonly("results", [](const Workspace& w) { return results_dict(w.results()); },
                               "The simulated times of its latest call (complete after barrier() for async calls)")
        .def_property_readonly("calls", &Workspace::calls)
        .def("__repr__", [](const Workspace& w) { return "tandem.Workspace(" + w.describe() + ")"; });
}

// ctx.ops: the registered ops as methods, their descriptions.
void bind_ops(py::module_& m) {
    py::class_<Ops>(m, "Ops", "ctx.ops.<op>(output_tensor, A, B, bias=None, async_op=False, config=None, workspace=None, "
                              "sanitize=False) -> workspace")
        .def("names", &Ops::names)
        .def("info", [](const Ops& ops, const std::string& op, const std::optional<std::string>& variant) {
                 const OpInfo i = ops.info(op, variant.value_or(""));
                 py::dict d;
                 d["name"] = i.name;
                 d["title"] = i.title;
                 d["doc"] = i.doc;
                 d["a_split"] = i.a_split;
                 d["b_split"] = i.b_split;
                 d["out_split"] = i.out_split;
                 d["k_per_rank"] = i.k_per_rank;
                 d["variants"] = i.variants;
                 d["variant"] = i.variant;
                 d["takes_bias"] = i.takes_bias;
                 d["dtypes"] = i.dtypes;
                 d["out_dtypes"] = i.out_dtypes;
                 d["own_math"] = i.own_math;
                 return d;
             }, py::arg("op"), py::arg("variant") = py::none(),
             "How the op splits A, B and the output over the ranks, its variants, and what `variant` (default: the "
             "op's first) accepts: bias, dtypes, output dtypes")
        .def("run", &call_op, py::arg(keyword("op")), py::arg("output_tensor"), py::arg("A"), py::arg("B"),
             py::arg("bias") = py::none(), py::arg(keyword("async_op")) = false, py::arg("config") = py::none(),
             py::arg("workspace") = py::none(), py::arg(keyword("sanitize")) = false)
        .def("__dir__", [](Ops& ops) { return ops.names(); })
        .def("__getattr__", [](py::object self, const std::string& name) -> py::object {
            Ops& ops = self.cast<Ops&>();
            const std::vector<std::string> names = ops.names();
            if (std::find(names.begin(), names.end(), name) == names.end()) {
                std::string list;
                for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
                throw py::attribute_error("tandem ops have no '" + name + "' (registered: " + list + ")");
            }
            return py::cpp_function(
                [self, name](Tensor& out, const Tensor& a, const Tensor& b, const py::object& bias, bool async_op,
                             const py::object& config, const py::object& workspace, bool sanitize) {
                    return call_op(self.cast<Ops&>(), name, out, a, b, bias, async_op, config, workspace, sanitize);
                },
                py::arg("output_tensor"), py::arg("A"), py::arg("B"), py::arg("bias") = py::none(),
                py::arg(keyword("async_op")) = false, py::arg("config") = py::none(), py::arg("workspace") = py::none(),
                py::arg(keyword("sanitize")) = false);
        });
}

// tandem.Context: the simulated cluster and its tensors.
void bind_context(py::module_& m) {
    py::class_<Context>(m, "Context", "A simulated cluster: profile, ranks, functional or timing-only")
        .def(py::init([](int ranks, const std::string& soc, const std::string& profile_file, bool functional,
                         int host_threads) {
                 ContextOptions o;
                 o.ranks = ranks;
                 o.soc = soc;
                 o.profile_file = profile_file;
                 o.functional = functional;
                 o.host_threads = host_threads;
                 o.words = ParamWords::Python;  // errors name parameters by their keywords
                 return std::make_unique<Context>(o);
             }),
             py::arg(keyword("ranks")) = ContextOptions{}.ranks, py::arg(keyword("soc")) = ContextOptions{}.soc,
             py::arg(keyword("profile_file")) = ContextOptions{}.profile_file,
             py::arg(keyword("timing_only")) = ContextOptions{}.functional,
             py::arg(keyword("host_threads")) = ContextOptions{}.host_threads)
        .def_property_readonly("num_ranks", &Context::ranks)
        .def_property_readonly("functional", &Context::functional)
        .def_property_readonly("profile", &Context::profile_name)
        .def_property_readonly("ops", &Context::ops, py::return_value_policy::reference_internal)
        .def("zeros", [](Context& c, int rows, int cols, const py::object& dtype) { return c.zeros(rows, cols, dtype_of(dtype)); },
             py::arg("rows"), py::arg("cols"), py::arg("dtype") = "fp16")
        .def("empty", [](Context& c, int rows, int cols, const py::object& dtype) { return c.empty(rows, cols, dtype_of(dtype)); },
             py::arg("rows"), py::arg("cols"), py::arg("dtype") = "fp16")
        .def("tensor",
             [](Context& c, const py::array& array, const py::object& dtype) {
                 if (array.ndim() != 3) throw Error("tensor data: one array of shape (ranks, rows, cols)");
                 const DataType t = dtype.is_none() ? dtype_of(array.dtype()) : dtype_of(dtype);
                 Tensor out = c.zeros(static_cast<int>(array.shape(1)), static_cast<int>(array.shape(2)), t);
                 copy_from_numpy(out, array);
                 return out;
             },
             py::arg("array"), py::arg("dtype") = py::none(), "A tensor from one array of shape (ranks, rows, cols)")
        .def("barrier", &Context::barrier, py::call_guard<py::gil_scoped_release>())
        .def("synchronize", &Context::synchronize, py::call_guard<py::gil_scoped_release>())
        .def("now_us", &Context::now_us);
}

}  // namespace

PYBIND11_MODULE(_core, m) {  // imported by the package tandem (python/tandem/__init__.py)
    m.doc() = "Tandem: a simulated Ascend-style NPU cluster running fused communication + compute ops (Iris-style API)";
    m.def("parameters", [] {
        py::list out;
        for (const ParameterInfo& p : parameters()) {
            py::dict d;
            d["name"] = p.name;
            d["type"] = p.type;
            d["help"] = p.help;
            d["api_field"] = p.api_field;
            d["python_keyword"] = p.python_keyword;
            d["python_aliases"] = p.python_aliases;
            d["python_place"] = p.python_place;
            d["python_call_keyword"] = p.python_call_keyword;
            d["min"] = p.min_value ? py::object(py::int_(*p.min_value)) : py::object(py::none());
            d["max"] = p.max_value ? py::object(py::int_(*p.max_value)) : py::object(py::none());
            out.append(d);
        }
        return out;
    }, "The parameters the module takes (Tandem's parameter schema): keyword, aliases, where, type, help, "
      "and an int's accepted range (min, max; None: any positive)");
    py::register_exception<Error>(m, "Error", PyExc_RuntimeError);

    bind_tensor(m);
    bind_workspace(m);
    bind_ops(m);
    bind_context(m);
}
