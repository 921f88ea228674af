// spec.classes and spec.nvidiaRuntimeClasses (policies/policy_reader.h).

#include <algorithm>
#include <cctype>
#include <map>

#include "engine/cuda.h"
#include "engine/join.h"
#include "policies/mig_profiles.h"
#include "policies/policy_reader.h"

namespace gpuadmit::policy_reader {
void PolicyReader::read_classes(const YAML::Node& node, const std::string& path) {
  auto classes = free_map(node, path);
  if (!classes) return;
  for (const Field& f : classes->fields) {
    GpuClass c;
    c.name = f.key;
    const std::string cp = key_path(path, f.key);
    if (f.key.empty()) add(f.key_node, cp, "class name must not be empty");
    read_class(f.value, cp, c);
    policy_.classes.push_back(std::move(c));
  }
}

void PolicyReader::read_class(const YAML::Node& node, const std::string& path, GpuClass& c) {
  auto m = map(node, path,
               {"nodeSelector", "taints", "gpusPerNode", "nodes", "mig", "timeSlicing",
                "deviceClasses", "price", "topology", "driver"});
  if (!m) return;
  ProfileNodes profile_nodes;
  with(*m, "nodeSelector",
       [&](const YAML::Node& n, const std::string& p) { read_node_selector(n, p, c); });
  with(*m, "taints", [&](const YAML::Node& n, const std::string& p) { read_taints(n, p, c); });
  with(*m, "gpusPerNode",
       [&](const YAML::Node& n, const std::string& p) { c.gpus_per_node = count(n, p, 1); });
  with(*m, "nodes", [&](const YAML::Node& n, const std::string& p) { c.nodes = count(n, p, 0); });
  with(*m, "mig",
       [&](const YAML::Node& n, const std::string& p) { read_mig(n, p, c, profile_nodes); });
  with(*m, "timeSlicing",
       [&](const YAML::Node& n, const std::string& p) { read_time_slicing(n, p, c); });
  with(*m, "deviceClasses",
       [&](const YAML::Node& n, const std::string& p) { read_device_classes(n, p, c); });
  with(*m, "price", [&](const YAML::Node& n, const std::string& p) { read_price(n, p, c); });
  with(*m, "driver", [&](const YAML::Node& n, const std::string& p) { read_driver(n, p, c); });
  with(*m, "topology", [&](const YAML::Node& n, const std::string& p) { read_topology(n, p, c); });
  if (const Field* ts = m->get("timeSlicing"); ts && m->get("mig")) {
    add(ts->key_node, key_path(path, "timeSlicing"),
        "a class cannot have both mig and timeSlicing: describe a MIG-partitioned pool and a "
        "time-sliced pool as two classes");
  }
  check_profiles_for_products(c, profile_nodes);
}

void PolicyReader::read_node_selector(const YAML::Node& n, const std::string& p, GpuClass& c) {
  auto sel = free_map(n, p);
  if (!sel) return;
  for (const Field& f : sel->fields) {
    const std::string kp = key_path(p, f.key);
    if (f.key.empty()) {
      add(f.key_node, kp, "label key must not be empty");
      continue;
    }
    std::vector<std::string> values;
    if (f.value.IsScalar()) {
      // A single value is accepted for `key: value`, as a nodeSelector is usually written.
      if (auto s = nonempty_string(f.value, kp)) values.push_back(*s);
    } else if (auto items = list(f.value, kp)) {
      for (size_t i = 0; i < items->size(); ++i) {
        if (auto s = nonempty_string((*items)[i], index_path(kp, i))) values.push_back(*s);
      }
      if (items->empty()) {
        add(f.value, kp, "must list at least one value (node affinity `In` needs one)");
      }
    }
    if (!values.empty()) c.node_selector.emplace_back(f.key, std::move(values));
  }
}

void PolicyReader::read_taints(const YAML::Node& n, const std::string& p, GpuClass& c) {
  auto items = list(n, p);
  if (!items) return;
  for (size_t i = 0; i < items->size(); ++i) {
    const std::string tp = index_path(p, i);
    auto tm = map((*items)[i], tp, {"key", "value", "effect"});
    if (!tm) continue;
    Taint t;
    if (const Field* k = tm->get("key")) {
      if (auto s = nonempty_string(k->value, child(tp, "key"))) t.key = *s;
    } else {
      missing(*tm, "key");
    }
    with(*tm, "value", [&](const YAML::Node& v, const std::string& vp) {
      if (auto s = string(v, vp)) t.value = *s;
    });
    if (const Field* e = tm->get("effect")) {
      if (auto s = one_of(e->value, child(tp, "effect"),
                          {"NoSchedule", "PreferNoSchedule", "NoExecute"})) {
        t.effect = *s;
      }
    } else {
      missing(*tm, "effect");
    }
    c.taints.push_back(std::move(t));
  }
}

void PolicyReader::read_mig(const YAML::Node& n, const std::string& p, GpuClass& c,
                            ProfileNodes& profile_nodes) {
  auto mm = map(n, p, {"strategy", "profiles"});
  if (!mm) return;
  MigConfig mig;
  with(*mm, "strategy", [&](const YAML::Node& s, const std::string& sp) {
    if (auto v = one_of(s, sp, {"mixed", "single"})) {
      mig.strategy = *v == "single" ? MigConfig::Strategy::kSingle : MigConfig::Strategy::kMixed;
    }
  });
  if (const Field* pf = mm->get("profiles")) {
    read_mig_profiles(pf->value, child(p, "profiles"), mig, profile_nodes);
  } else {
    missing(*mm, "profiles");
  }
  c.mig = std::move(mig);
}

void PolicyReader::read_mig_profiles(const YAML::Node& n, const std::string& pp, MigConfig& mig,
                                     ProfileNodes& profile_nodes) {
  auto items = list(n, pp);
  if (!items) return;
  if (items->empty()) add(n, pp, "must list at least one MIG profile");
  for (size_t i = 0; i < items->size(); ++i) {
    const std::string ip = index_path(pp, i);
    auto s = string((*items)[i], ip);
    if (!s) continue;
    if (!is_mig_profile_syntax(*s)) {
      add((*items)[i], ip,
          "invalid MIG profile " + quote(*s) +
              ": must be <n>g.<m>gb, optionally followed by +me (e.g. 1g.10gb, 3g.40gb, "
              "1g.10gb+me)");
      continue;
    }
    if (std::find(mig.profiles.begin(), mig.profiles.end(), *s) != mig.profiles.end()) {
      add((*items)[i], ip, "duplicate MIG profile " + quote(*s));
      continue;
    }
    mig.profiles.push_back(*s);
    profile_nodes.emplace_back(ip, (*items)[i]);
  }
}

void PolicyReader::read_time_slicing(const YAML::Node& n, const std::string& p, GpuClass& c) {
  auto tm = map(n, p, {"replicas", "renameByDefault", "failRequestsGreaterThanOne"});
  if (!tm) return;
  TimeSlicing ts;
  with(*tm, "replicas", [&](const YAML::Node& v, const std::string& vp) {
    if (auto r = count(v, vp, 1)) ts.replicas = *r;
  });
  with(*tm, "renameByDefault", [&](const YAML::Node& v, const std::string& vp) {
    if (auto b = boolean(v, vp)) ts.rename_by_default = *b;
  });
  with(*tm, "failRequestsGreaterThanOne", [&](const YAML::Node& v, const std::string& vp) {
    if (auto b = boolean(v, vp)) ts.fail_requests_greater_than_one = *b;
  });
  c.time_slicing = ts;
}

void PolicyReader::check_profiles_for_products(const GpuClass& c,
                                               const ProfileNodes& profile_nodes) {
  for (const auto& [key, values] : c.node_selector) {
    if (key != kProductLabel) continue;
    for (const std::string& product : values) {
      auto valid = mig_profiles_for_product(product);
      if (!valid) continue;
      for (const auto& [ip, pnode] : profile_nodes) {
        const std::string& profile = pnode.Scalar();
        if (std::find(valid->begin(), valid->end(), profile) == valid->end()) {
          add(pnode, ip,
              "MIG profile " + quote(profile) + " cannot be made by " + product +
                  " (valid: " + join(*valid) + ")");
        }
      }
    }
  }
}

// `deviceClasses: {gpu.nvidia.com: {}, mig-1g.10gb.gpu.nvidia.com: {devicesPerGPU: 7,
// migProfile: 1g.10gb}}` (docs/dra.md): the DRA DeviceClasses that hand out this class's
// devices. A DeviceClass names one pool: one mapped by two classes is reported in
// check_references, a migProfile the class does not offer in check_device_class_profiles.
void PolicyReader::read_device_classes(const YAML::Node& node, const std::string& path,
                                       GpuClass& c) {
  auto dm = free_map(node, path);
  if (!dm) return;
  for (const Field& f : dm->fields) {
    const std::string dp = key_path(path, f.key);
    if (!is_device_class_name(f.key)) {
      add(f.key_node, dp,
          "invalid DeviceClass name " + quote(f.key) +
              ": must be a DNS subdomain (lower-case letters, digits, '-' and '.'), e.g. "
              "gpu.nvidia.com");
      continue;
    }
    DeviceClassMapping mapping;
    mapping.name = f.key;
    // `gpu.nvidia.com: {}` and `gpu.nvidia.com:` (null) both mean the defaults.
    if (!f.value.IsNull()) {
      auto om = map(f.value, dp, {"devicesPerGPU", "migProfile"});
      if (!om) continue;
      with(*om, "devicesPerGPU", [&](const YAML::Node& v, const std::string& vp) {
        if (auto n = count(v, vp, 1)) mapping.devices_per_gpu = *n;
      });
      with(*om, "migProfile", [&](const YAML::Node& v, const std::string& vp) {
        auto s = string(v, vp);
        if (!s) return;
        if (!is_mig_profile_syntax(*s)) {
          add(v, vp, "invalid MIG profile " + quote(*s) + ": must be <n>g.<m>gb, optionally +me");
          return;
        }
        mapping.mig_profile = *s;
        device_class_profiles_.push_back(
            DeviceClassProfile{Ref{vp, v.Mark(), *s}, policy_.classes.size()});
      });
    }
    device_class_refs_.push_back(Ref{dp, f.key_node.Mark(), f.key});
    c.device_classes.push_back(std::move(mapping));
  }
}

namespace {

// "3.67" → 3'670'000: digits, an optional point and at most 6 digits; at most 10^9 whole units.
std::optional<int64_t> parse_micros(std::string_view text) {
  const size_t point = text.find('.');
  const std::string_view whole = text.substr(0, point);
  const std::string_view fraction = point == std::string_view::npos ? "" : text.substr(point + 1);
  auto digits = [](std::string_view s) {
    return std::all_of(s.begin(), s.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
  };
  if (whole.empty() || whole.size() > 10 || !digits(whole) || fraction.size() > 6 ||
      !digits(fraction) || (point != std::string_view::npos && fraction.empty())) {
    return std::nullopt;
  }
  int64_t micros = 0;
  for (char ch : whole) micros = micros * 10 + (ch - '0');
  if (micros > 1'000'000'000) return std::nullopt;
  for (size_t i = 0; i < 6; ++i)
    micros = micros * 10 + (i < fraction.size() ? fraction[i] - '0' : 0);
  return micros;
}

bool is_currency_code(std::string_view s) {
  return s.size() == 3 &&
         std::all_of(s.begin(), s.end(), [](char ch) { return ch >= 'A' && ch <= 'Z'; });
}

}  // namespace

void PolicyReader::read_price(const YAML::Node& node, const std::string& path, GpuClass& c) {
  auto m = map(node, path, {"perGPUHour", "currency"});
  if (!m) return;
  GpuPrice price;
  bool ok = true;
  with(*m, "perGPUHour", [&](const YAML::Node& v, const std::string& vp) {
    const std::optional<std::string> s = string(v, vp);
    const std::optional<int64_t> micros = s ? parse_micros(*s) : std::nullopt;
    if (s && !micros) {
      add(v, vp,
          "invalid price " + quote(*s) +
              ": must be a decimal number of at most 10^9 with at most 6 digits after the point, "
              "e.g. 3.67");
    }
    ok = ok && micros;
    if (micros) price.micros_per_gpu_hour = *micros;
  });
  with(*m, "currency", [&](const YAML::Node& v, const std::string& vp) {
    const std::optional<std::string> s = string(v, vp);
    if (s && !is_currency_code(*s)) {
      add(v, vp, "invalid currency " + quote(*s) + ": must be an ISO 4217 code, e.g. USD or EUR");
    }
    ok = ok && s && is_currency_code(*s);
    if (s) price.currency = *s;
    // Every priced class in one currency: the fleet adds their costs up. (Classes are read in
    // order: the earlier ones are in the policy already.)
    for (const GpuClass& other : policy_.classes) {
      if (!ok || !other.price || other.price->currency == price.currency) continue;
      add(v, vp,
          "class " + c.name + " is priced in " + price.currency + ", class " + other.name + " in " +
              other.price->currency + ": price every class in one currency");
      ok = false;
    }
  });
  for (std::string_view key : {"perGPUHour", "currency"}) {
    if (!m->get(key)) {
      missing(*m, key);
      ok = false;
    }
  }
  if (ok) c.price = std::move(price);
}

// `driver: {version: "535.104.05"}` or `driver: {cuda: "12.2"}` (GPU027): one of the two, each
// validated as engine/cuda.h reads it. A driver older than every CUDA release of the table is
// refused: GPU027 could say nothing of it.
void PolicyReader::read_driver(const YAML::Node& node, const std::string& path, GpuClass& c) {
  auto m = map(node, path, {"version", "cuda"});
  if (!m) return;
  ClassDriver driver;
  with(*m, "version", [&](const YAML::Node& v, const std::string& vp) {
    const std::optional<std::string> s = string(v, vp);
    if (!s) return;
    const std::optional<DriverVersion> d = parse_driver_version(*s);
    if (!d) {
      add(v, vp,
          "invalid driver version " + quote(*s) +
              ": must be the version nvidia-smi prints, e.g. 535.104.05 (1 to 3 numbers "
              "separated by dots)");
    } else if (!cuda_for_driver(*d)) {
      add(v, vp,
          "driver " + *s +
              " is older than CUDA 10.0's (410.48): gpuadmit has no CUDA "
              "version for it");
    } else {
      driver.version = *s;
    }
  });
  with(*m, "cuda", [&](const YAML::Node& v, const std::string& vp) {
    const std::optional<std::string> s = string(v, vp);
    if (!s) return;
    const std::optional<CudaVersion> cv = parse_cuda_version(*s);
    if (!cv || s->find('.') == std::string::npos || cv->patch) {
      add(v, vp,
          "invalid CUDA version " + quote(*s) +
              ": must be <major>.<minor>, the CUDA version nvidia-smi prints, e.g. 12.2");
      return;
    }
    driver.cuda = *s;
  });
  if (m->get("version") && m->get("cuda")) {
    add(node, path,
        "give either version (the driver's) or cuda (the highest CUDA version it runs), not both: "
        "the driver version already says which CUDA it runs");
    return;
  }
  if (!m->get("version") && !m->get("cuda")) {
    add(node, path, "must give version (the driver's, e.g. 535.104.05) or cuda (e.g. 12.2)");
    return;
  }
  if (!driver.version.empty() || !driver.cuda.empty()) c.driver = std::move(driver);
}

// `cudaImages: [{pattern: "registry.corp/ml/*-cu12.4*", cuda: "12.4"}]` (GPU027): the platform's
// own image naming; `*` matches any characters. First match wins.
void PolicyReader::read_cuda_images(const YAML::Node& node, const std::string& path) {
  auto items = list(node, path);
  if (!items) return;
  for (size_t i = 0; i < items->size(); ++i) {
    const std::string ip = index_path(path, i);
    auto im = map((*items)[i], ip, {"pattern", "cuda"});
    if (!im) continue;
    CudaImagePattern entry;
    bool ok = true;
    if (const Field* f = im->get("pattern")) {
      const std::optional<std::string> s = nonempty_string(f->value, child(ip, "pattern"));
      ok = ok && s;
      if (s) entry.pattern = *s;
    } else {
      missing(*im, "pattern");
      ok = false;
    }
    if (const Field* f = im->get("cuda")) {
      const std::string cp = child(ip, "cuda");
      const std::optional<std::string> s = string(f->value, cp);
      const std::optional<CudaVersion> cv = s ? parse_cuda_version(*s) : std::nullopt;
      if (s && (!cv || s->find('.') == std::string::npos)) {
        add(f->value, cp,
            "invalid CUDA version " + quote(*s) +
                ": must be <major>.<minor>[.<patch>], e.g. 12.4 or 12.4.1");
      }
      ok = ok && cv && s->find('.') != std::string::npos;
      if (s) entry.cuda = *s;
    } else {
      missing(*im, "cuda");
      ok = false;
    }
    if (ok) policy_.cuda_images.push_back(std::move(entry));
  }
}

namespace {

// A Kubernetes label key (apimachinery validation IsQualifiedName): an optional DNS-subdomain
// prefix and "/", then a name of 1-63 alphanumerics, '-', '_' or '.', beginning and ending with
// an alphanumeric.
bool is_label_key(std::string_view key) {
  const size_t slash = key.rfind('/');
  const std::string_view name = slash == std::string_view::npos ? key : key.substr(slash + 1);
  const std::string_view prefix = slash == std::string_view::npos ? "" : key.substr(0, slash);
  auto alnum = [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) != 0; };
  if (name.empty() || name.size() > 63 || !alnum(name.front()) || !alnum(name.back())) return false;
  for (char ch : name)
    if (!alnum(ch) && ch != '-' && ch != '_' && ch != '.') return false;
  if (slash == std::string_view::npos) return true;
  if (prefix.empty() || prefix.size() > 253) return false;
  for (char ch : prefix)
    if (!(std::islower(static_cast<unsigned char>(ch)) ||
          std::isdigit(static_cast<unsigned char>(ch)) || ch == '-' || ch == '.'))
      return false;
  return alnum(prefix.front()) && alnum(prefix.back());
}

}  // namespace

void PolicyReader::read_topology(const YAML::Node& node, const std::string& path, GpuClass& c) {
  auto m = map(node, path, {"nvlinkGroup", "domainLabel"});
  if (!m) return;
  ClassTopology t;
  with(*m, "nvlinkGroup", [&](const YAML::Node& v, const std::string& vp) {
    t.nvlink_group = count(v, vp, 1);
    if (t.nvlink_group && c.gpus_per_node && *t.nvlink_group > *c.gpus_per_node) {
      add(v, vp,
          "nvlinkGroup " + std::to_string(*t.nvlink_group) + " is more than gpusPerNode " +
              std::to_string(*c.gpus_per_node) + ": an NVLink group is part of one node");
      t.nvlink_group.reset();
    }
  });
  with(*m, "domainLabel", [&](const YAML::Node& v, const std::string& vp) {
    const std::optional<std::string> s = string(v, vp);
    if (s && !is_label_key(*s)) {
      add(v, vp,
          "invalid label key " + quote(*s) +
              ": must be a Kubernetes label key such as nvidia.com/gpu.clique");
    } else if (s) {
      t.domain_label = *s;
    }
  });
  c.topology = std::move(t);
}

bool PolicyReader::is_device_class_name(std::string_view name) {
  if (name.empty() || name.size() > 253) return false;
  for (char ch : name) {
    if (!(std::islower(static_cast<unsigned char>(ch)) ||
          std::isdigit(static_cast<unsigned char>(ch)) || ch == '-' || ch == '.')) {
      return false;
    }
  }
  return std::isalnum(static_cast<unsigned char>(name.front())) &&
         std::isalnum(static_cast<unsigned char>(name.back()));
}

void PolicyReader::check_device_classes() {
  std::map<std::string, const Ref*, std::less<>> first;
  for (const Ref& r : device_class_refs_) {
    auto [it, inserted] = first.emplace(r.name, &r);
    if (!inserted) {
      add(r.mark, r.path,
          "DeviceClass " + quote(r.name) + " is already mapped by " + it->second->path +
              "; a DeviceClass hands out the devices of one class");
    }
  }
  for (const DeviceClassProfile& d : device_class_profiles_) {
    if (d.class_index >= policy_.classes.size()) continue;
    const GpuClass& c = policy_.classes[d.class_index];
    if (!c.mig) {
      add(d.ref.mark, d.ref.path,
          "migProfile " + quote(d.ref.name) + " on class " + quote(c.name) +
              ", which has no mig: describe the class's MIG profiles under mig.profiles");
    } else if (std::find(c.mig->profiles.begin(), c.mig->profiles.end(), d.ref.name) ==
               c.mig->profiles.end()) {
      add(d.ref.mark, d.ref.path,
          "unknown MIG profile " + quote(d.ref.name) + ": class " + quote(c.name) + " offers " +
              gpuadmit::join(c.mig->profiles));
    }
  }
}

void PolicyReader::read_nvidia_runtime_classes(const YAML::Node& node, const std::string& path) {
  for (const Ref& r : names(node, path)) {
    if (!is_dns_subdomain(r.name)) {
      add(r.mark, r.path,
          "invalid RuntimeClass name " + quote(r.name) +
              ": must be a lowercase DNS subdomain such as nvidia-cdi");
      continue;
    }
    policy_.nvidia_runtime_classes.push_back(r.name);
  }
}

}  // namespace gpuadmit::policy_reader
