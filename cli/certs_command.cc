// gpuadmit certs: a CA and a serving certificate for the webhook's Service (SPEC §8), for
// clusters without cert-manager and for local development.

#include <charconv>
#include <iostream>
#include <optional>
#include <string>

#include "certs/certs.h"
#include "cli/args.h"
#include "cli/commands.h"

namespace gpuadmit::cli {
namespace {

constexpr const char* kCertsUsage =
    "usage: gpuadmit certs --service S --namespace NS --out DIR [--san NAME]... [--days N]\n";

// The serving certificate's names (the Service's DNS names, then each --san) and --days; nothing,
// told on standard error, for a bad --days or an empty --san.
std::optional<certs::LeafProfile> leaf_profile(const Args& args, const std::string& service,
                                               const std::string& ns) {
  int days = 365;
  if (auto text = args.value("days")) {
    auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), days);
    if (ec != std::errc() || end != text->data() + text->size() || days < 1 || days > 3650) {
      std::cerr << "gpuadmit certs: --days must be a whole number of days from 1 to 3650, not \""
                << *text << "\"\n";
      return std::nullopt;
    }
  }
  certs::LeafProfile profile;
  profile.common_name = service + "." + ns + ".svc";
  profile.names = certs::service_dns_names(service, ns);
  for (const std::string& san : args.values("san")) {
    if (san.empty()) {
      std::cerr << "gpuadmit certs: --san needs a DNS name or an IP address\n";
      return std::nullopt;
    }
    profile.names.push_back(san);
  }
  profile.valid_days = days;
  return profile;
}

}  // namespace

int certs_command(const std::vector<std::string>& argv) {
  Args args;
  if (auto error = Args::parse(argv, {"service", "namespace", "out", "san", "days"}, {}, args)) {
    std::cerr << "gpuadmit certs: " << *error << "\n" << kCertsUsage;
    return 2;
  }
  if (args.help()) return print_usage(kCertsUsage);
  if (!args.positional().empty()) {
    std::cerr << "gpuadmit certs: unexpected argument \"" << args.positional().front() << "\"\n"
              << kCertsUsage;
    return 2;
  }
  for (const char* required : {"service", "namespace", "out"}) {
    if (args.value_or(required, "").empty()) {
      std::cerr << "gpuadmit certs: --" << required << " is required\n" << kCertsUsage;
      return 2;
    }
  }
  const std::string service = *args.value("service"), ns = *args.value("namespace");
  const std::string out = *args.value("out");
  const std::optional<certs::LeafProfile> profile = leaf_profile(args, service, ns);
  if (!profile) return 2;

  // Ten years for the CA: it must outlive the serving certificate it signs.
  auto ca = certs::generate_ca(service + "." + ns + " webhook CA", 3650);
  if (auto* error = std::get_if<std::string>(&ca)) {
    std::cerr << "gpuadmit certs: " << *error << "\n";
    return 2;
  }
  const certs::PemPair& ca_pair = std::get<certs::PemPair>(ca);
  auto leaf = certs::issue_certificate(ca_pair, *profile);
  if (auto* error = std::get_if<std::string>(&leaf)) {
    std::cerr << "gpuadmit certs: " << *error << "\n";
    return 2;
  }
  if (std::string error =
          certs::write_certificate_files(out, ca_pair.cert_pem, std::get<certs::PemPair>(leaf));
      !error.empty()) {
    std::cerr << "gpuadmit certs: " << error << "\n";
    return 2;
  }
  std::cerr << "gpuadmit certs: wrote " << out << "/ca.crt, " << out << "/tls.crt, " << out
            << "/tls.key; caBundle (base64 of ca.crt) on stdout\n";
  std::cout << certs::base64(ca_pair.cert_pem) << "\n";
  return 0;
}

}  // namespace gpuadmit::cli
