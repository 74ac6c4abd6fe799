#!/usr/bin/env python3
"""deploy/kubernetes/ against the official schemas (validate_manifests.py), and the validator
against broken copies of the same manifests: each mistake below must be caught, with a message
that names it.

    python3 -m unittest tests/kubernetes/test_manifests.py   (ctest: kubernetes_manifests)
"""
import base64
import copy
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import kustomize_build  # noqa: E402
import validate_manifests  # noqa: E402

ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
DEPLOY = os.path.join(ROOT, "deploy", "kubernetes")


def project_version():
    with open(os.path.join(ROOT, "CMakeLists.txt"), encoding="utf-8") as f:
        return re.search(r"project\(gpuscope VERSION ([0-9.]+)", f.read()).group(1)


def load(relative):
    with open(os.path.join(DEPLOY, relative), encoding="utf-8") as f:
        return [d for d in yaml.safe_load_all(f) if d]


class ShippedManifests(unittest.TestCase):
    def test_every_manifest_validates(self):
        count, problems = validate_manifests.validate([DEPLOY], project_version())
        self.assertEqual(problems, [])
        # files: namespace, daemonset, service, servicemonitor; the TLS variant's two Secrets;
        # pvc, job, mpijob. Built: the TLS variant's namespace, daemonset, service,
        # servicemonitor and two Secrets.
        self.assertEqual(count, 9 + 6)

    def test_the_mpijob_has_the_nsight_module_shape(self):
        (job,) = load("profile/mpijob.yaml")
        spec = job["spec"]
        self.assertEqual(job["apiVersion"], "kubeflow.org/v2beta1")
        self.assertEqual(spec["mpiReplicaSpecs"]["Worker"]["replicas"], 2)
        self.assertEqual(spec["slotsPerWorker"], 8)
        launcher = spec["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]
        words = validate_manifests.command_of(launcher)
        self.assertIn("-np", words)
        self.assertEqual(words[words.index("-np") + 1], "16")
        wrapped = words.index("profile")
        self.assertEqual(words[wrapped - 1], "/gpuscope/bin/gpuscope")
        self.assertEqual(words[wrapped + 1:wrapped + 6], ["-o", "/out/%h.rank%r.db", "--", "python",
                                                         "/workspace/train.py;"])

    def test_the_exporter_serves_every_interface_on_the_port_the_service_targets(self):
        (daemonset,) = load("exporter/daemonset.yaml")
        container = daemonset["spec"]["template"]["spec"]["containers"][0]
        self.assertEqual(container["args"][:3], ["serve", "--listen", "0.0.0.0:9400"])
        self.assertEqual(container["ports"][0]["containerPort"], 9400)
        self.assertTrue(daemonset["spec"]["template"]["spec"]["hostPID"])


TLS = os.path.join(DEPLOY, "exporter-tls")


def by_kind(objects):
    return {d["kind"]: d for d in objects}


class TlsVariant(unittest.TestCase):
    """deploy/kubernetes/exporter-tls: the exporter of ../exporter, over TLS with basic auth."""

    def test_the_default_exporter_needs_no_secret(self):
        plain = by_kind(kustomize_build.build(os.path.join(DEPLOY, "exporter")))
        self.assertNotIn("Secret", plain)
        pod = plain["DaemonSet"]["spec"]["template"]["spec"]
        self.assertNotIn("--web-config", pod["containers"][0]["args"])
        self.assertNotIn("scheme", plain["ServiceMonitor"]["spec"]["endpoints"][0])

    def test_serve_reads_the_web_config_from_the_secret_and_nothing_else_changes(self):
        plain = by_kind(kustomize_build.build(os.path.join(DEPLOY, "exporter")))
        tls = by_kind(kustomize_build.build(TLS))
        pod = tls["DaemonSet"]["spec"]["template"]["spec"]
        container = pod["containers"][0]
        self.assertEqual(container["args"], plain["DaemonSet"]["spec"]["template"]["spec"]["containers"][0]["args"]
                         + ["--web-config", "/etc/gpuscope/web-config.yml"])
        self.assertEqual(container["volumeMounts"], [{"name": "web-config", "mountPath": "/etc/gpuscope",
                                                      "readOnly": True}])
        self.assertEqual(pod["volumes"], [{"name": "web-config", "secret": {
            "secretName": "gpuscope-web-config", "defaultMode": 0o400}}])
        for probe in ("readinessProbe", "livenessProbe"):
            self.assertEqual(container[probe]["tcpSocket"], {"port": "metrics"})
            self.assertNotIn("httpGet", container[probe])
        # The rest of the DaemonSet is the default one's.
        for key in ("args", "volumeMounts", "readinessProbe", "livenessProbe"):
            del container[key]
            plain["DaemonSet"]["spec"]["template"]["spec"]["containers"][0].pop(key, None)
        del pod["volumes"]
        self.assertEqual(tls["DaemonSet"], plain["DaemonSet"])
        endpoint = tls["ServiceMonitor"]["spec"]["endpoints"][0]
        self.assertEqual(endpoint["scheme"], "https")
        self.assertEqual(endpoint["tlsConfig"], {"ca": {"secret": {"name": "gpuscope-scrape", "key": "ca.crt"}},
                                                 "serverName": "gpuscope-exporter.gpuscope.svc"})
        self.assertEqual(endpoint["basicAuth"], {"username": {"name": "gpuscope-scrape", "key": "username"},
                                                 "password": {"name": "gpuscope-scrape", "key": "password"}})

    def test_the_shipped_secrets_are_placeholders_with_no_key_or_password(self):
        for folder, _, names in os.walk(os.path.join(ROOT, "deploy")):
            for name in names:
                with open(os.path.join(folder, name), encoding="utf-8", errors="replace") as f:
                    self.assertNotRegex(f.read(), r"-----BEGIN [A-Z ]*PRIVATE KEY-----", name)
        secrets = {d["metadata"]["name"]: d["stringData"] for d in kustomize_build.build(TLS) if d["kind"] == "Secret"}
        self.assertIn("REPLACE", secrets["gpuscope-web-config"]["tls.key"])
        self.assertIn("REPLACE", secrets["gpuscope-web-config"]["tls.crt"])
        users = yaml.safe_load(secrets["gpuscope-web-config"]["web-config.yml"])["basic_auth_users"]
        self.assertEqual(list(users), [secrets["gpuscope-scrape"]["username"]])
        self.assertTrue(all("REPLACE" in h for h in users.values()))
        self.assertIn("REPLACE", secrets["gpuscope-scrape"]["password"])
        self.assertIn("REPLACE", secrets["gpuscope-scrape"]["ca.crt"])

    @unittest.skipUnless(shutil.which("kubectl"), "kubectl is not installed: kustomize's own build not compared")
    def test_the_validated_build_is_kubectls(self):
        def key(doc):
            return (doc["kind"], doc["metadata"].get("namespace"), doc["metadata"]["name"])
        for folder in (TLS, os.path.join(DEPLOY, "exporter")):
            out = subprocess.run(["kubectl", "kustomize", folder], capture_output=True, text=True,
                                 timeout=60, check=True).stdout
            theirs = {key(d): d for d in yaml.safe_load_all(out) if d}
            ours = {key(d): d for d in kustomize_build.build(folder)}
            self.assertEqual(ours, theirs)


class BrokenManifests(unittest.TestCase):
    """Each test breaks one thing in a copy of the shipped manifests."""

    def problems_with(self, relative, change):
        docs = load(relative)
        broken = copy.deepcopy(docs)
        change(broken)
        with tempfile.TemporaryDirectory() as folder:
            # The whole tree, with the one file replaced, so cross-object checks see the rest.
            for dirpath, _, names in os.walk(DEPLOY):
                for name in names:
                    source = os.path.join(dirpath, name)
                    rel = os.path.relpath(source, DEPLOY)
                    target = os.path.join(folder, rel)
                    os.makedirs(os.path.dirname(target), exist_ok=True)
                    with open(source, encoding="utf-8") as f, open(target, "w", encoding="utf-8") as out:
                        if rel == relative:
                            yaml.safe_dump_all(broken, out)
                        else:
                            out.write(f.read())
            _, problems = validate_manifests.validate([folder], project_version())
        return "\n".join(problems)

    def assertCaught(self, relative, change, *expected):
        problems = self.problems_with(relative, change)
        for text in expected:
            self.assertIn(text, problems)

    @staticmethod
    def pod(doc):
        return doc["spec"]["template"]["spec"]

    def test_a_misspelt_field(self):
        def change(docs):
            self.pod(docs[0])["hostPid"] = self.pod(docs[0]).pop("hostPID")
        self.assertCaught("exporter/daemonset.yaml", change, "'hostPid' was unexpected")

    def test_a_port_written_as_text(self):
        def change(docs):
            self.pod(docs[0])["containers"][0]["ports"][0]["containerPort"] = "9400"
        self.assertCaught("exporter/daemonset.yaml", change,
                          "containers.0.ports.0.containerPort: '9400' is not of type 'integer'")

    def test_a_memory_request_that_is_not_a_quantity(self):
        def change(docs):
            self.pod(docs[0])["containers"][0]["resources"]["requests"]["memory"] = "32 MB"
        self.assertCaught("exporter/daemonset.yaml", change, "'32 MB' is not a quantity")

    def test_a_selector_that_misses_its_own_pods(self):
        def change(docs):
            docs[0]["spec"]["selector"]["matchLabels"]["app.kubernetes.io/component"] = "exporters"
        self.assertCaught("exporter/daemonset.yaml", change,
                          "spec.selector.matchLabels does not select spec.template's labels")

    def test_a_service_that_selects_nothing(self):
        def change(docs):
            docs[0]["spec"]["selector"]["app.kubernetes.io/name"] = "gpu-scope"
        self.assertCaught("exporter/service.yaml", change, "selects no pod template in the same namespace")

    def test_a_service_port_that_targets_no_container_port(self):
        def change(docs):
            docs[0]["spec"]["ports"][0]["targetPort"] = "http"
        self.assertCaught("exporter/service.yaml", change, "targetPort 'http' is no container port")

    def test_a_servicemonitor_on_a_port_the_service_lacks(self):
        def change(docs):
            docs[0]["spec"]["endpoints"][0]["port"] = "http-metrics"
        self.assertCaught("exporter/servicemonitor.yaml", change, "port 'http-metrics' is not a port of the Service")

    def test_a_servicemonitor_looking_in_the_wrong_namespace(self):
        def change(docs):
            docs[0]["spec"]["namespaceSelector"]["matchNames"] = ["monitoring"]
        self.assertCaught("exporter/servicemonitor.yaml", change, "selects no Service in ['monitoring']")

    def test_a_servicemonitor_interval_prometheus_would_not_parse(self):
        def change(docs):
            docs[0]["spec"]["endpoints"][0]["interval"] = "15 seconds"
        self.assertCaught("exporter/servicemonitor.yaml", change, "spec.endpoints.0.interval: '15 seconds' does not match")

    def test_mpirun_np_that_is_not_the_slots(self):
        def change(docs):
            docs[0]["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] = 4
        self.assertCaught("profile/mpijob.yaml", change, "mpirun -np 16 but there are 32 slots")

    def test_workers_asking_for_fewer_gpus_than_slots(self):
        def change(docs):
            worker = docs[0]["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]
            worker["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = 4
        self.assertCaught("profile/mpijob.yaml", change, "asks for 4 GPUs but slotsPerWorker is 8")

    def test_an_mpijob_field_the_crd_does_not_have(self):
        def change(docs):
            docs[0]["spec"]["slotPerWorker"] = docs[0]["spec"].pop("slotsPerWorker")
        self.assertCaught("profile/mpijob.yaml", change, "'slotPerWorker' was unexpected")

    def test_an_mpi_implementation_the_operator_does_not_know(self):
        def change(docs):
            docs[0]["spec"]["mpiImplementation"] = "OpenMP"
        self.assertCaught("profile/mpijob.yaml", change, "spec.mpiImplementation: 'OpenMP' is not one of")

    def test_an_mpijob_without_a_launcher(self):
        def change(docs):
            specs = docs[0]["spec"]["mpiReplicaSpecs"]
            specs["Master"] = specs.pop("Launcher")
        self.assertCaught("profile/mpijob.yaml", change, "'Master' is not a role", "there is no Launcher")

    def test_a_pod_field_inside_the_mpijob_checked_by_the_crd(self):
        def change(docs):
            worker = docs[0]["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]
            worker["containers"][0]["volumeMount"] = worker["containers"][0].pop("volumeMounts")
        self.assertCaught("profile/mpijob.yaml", change, "'volumeMount' was unexpected")

    def test_a_mount_of_a_volume_the_pod_lacks(self):
        def change(docs):
            self.pod(docs[0])["containers"][0]["volumeMounts"][1]["name"] = "run"
        self.assertCaught("profile/job.yaml", change, "volumeMount 'run' is not a volume of the pod")

    def test_an_image_of_another_gpuscope_version(self):
        def change(docs):
            self.pod(docs[0])["initContainers"][0]["image"] = "localhost/gpuscope:0.0.9"
        self.assertCaught("profile/job.yaml", change, "image 'localhost/gpuscope:0.0.9' is not gpuscope")

    def test_a_name_that_is_not_a_dns_label(self):
        def change(docs):
            docs[0]["metadata"]["name"] = "Train_GPUscope"
        self.assertCaught("profile/job.yaml", change, "metadata.name 'Train_GPUscope' is not a DNS label")

    def test_a_kind_of_an_api_version_kubernetes_no_longer_serves(self):
        def change(docs):
            docs[0]["apiVersion"] = "extensions/v1beta1"
        self.assertCaught("exporter/daemonset.yaml", change,
                          "apiVersion 'extensions/v1beta1' kind 'DaemonSet' is not one of the known kinds")

    def test_a_kustomization_naming_a_missing_file(self):
        def change(docs):
            docs[0]["resources"].append("rbac.yaml")
        self.assertCaught("exporter/kustomization.yaml", change, "'rbac.yaml' does not exist")

    @staticmethod
    def in_patch(index, old, new):
        """A change of the TLS kustomization's patches.INDEX text."""
        def change(docs):
            text = docs[0]["patches"][index]["patch"]
            assert old in text, old
            docs[0]["patches"][index]["patch"] = text.replace(old, new)
        return change

    @staticmethod
    def in_web_config(old, new):
        def change(docs):
            text = docs[0]["stringData"]["web-config.yml"]
            assert old in text, old
            docs[0]["stringData"]["web-config.yml"] = text.replace(old, new)
        return change

    def test_an_http_probe_on_a_server_that_asks_for_a_password(self):
        self.assertCaught("exporter-tls/kustomization.yaml",
                          self.in_patch(0, "tcpSocket: {port: metrics}",
                                        "httpGet: {path: /healthz, port: metrics, scheme: HTTPS}"),
                          "readinessProbe: httpGet without a password", "the kubelet gets 401")

    def test_a_plain_http_probe_on_a_tls_port(self):
        self.assertCaught("exporter-tls/kustomization.yaml",
                          self.in_patch(0, "tcpSocket: {port: metrics}", "httpGet: {path: /healthz, port: metrics}"),
                          "readinessProbe: httpGet speaks HTTP to a port that serves TLS")

    def test_a_web_config_path_that_is_not_mounted(self):
        self.assertCaught("exporter-tls/kustomization.yaml",
                          self.in_patch(0, "value: /etc/gpuscope/web-config.yml", "value: /etc/gpuscope/web.yml"),
                          "--web-config '/etc/gpuscope/web.yml' is no file of a Secret mounted")

    def test_a_volume_of_a_secret_the_manifests_lack(self):
        self.assertCaught("exporter-tls/kustomization.yaml",
                          self.in_patch(0, "secretName: gpuscope-web-config", "secretName: gpuscope-webconfig"),
                          "Secret 'gpuscope-webconfig', which is not in the manifests")

    def test_a_patch_whose_target_is_not_there(self):
        self.assertCaught("exporter-tls/kustomization.yaml",
                          lambda docs: docs[0]["patches"][0]["target"].update(name="gpuscope"),
                          "matches no object of the build")

    def test_a_kustomization_field_the_validator_would_not_build(self):
        self.assertCaught("exporter-tls/kustomization.yaml",
                          lambda docs: docs[0].update(images=[{"name": "localhost/gpuscope", "newTag": "0.2"}]),
                          "images: not built by this validator")

    def test_a_servicemonitor_scraping_tls_pods_over_http(self):
        self.assertCaught("exporter-tls/kustomization.yaml", self.in_patch(1, "value: https", "value: http"),
                          "scheme http but the pods serve TLS")

    def test_a_servicemonitor_without_the_password(self):
        def change(docs):
            operations = yaml.safe_load(docs[0]["patches"][1]["patch"])
            docs[0]["patches"][1]["patch"] = yaml.safe_dump([o for o in operations if "basicAuth" not in o["path"]])
        self.assertCaught("exporter-tls/kustomization.yaml", change,
                          "the pods ask for a password (basic_auth_users) and there is no basicAuth")

    def test_a_servicemonitor_naming_a_key_the_secret_lacks(self):
        self.assertCaught("exporter-tls/kustomization.yaml",
                          self.in_patch(1, "{name: gpuscope-scrape, key: password}", "{name: gpuscope-scrape, key: pass}"),
                          "basicAuth.password: Secret 'gpuscope-scrape' has no key 'pass'")

    def test_a_servicemonitor_checking_the_certificate_against_pod_addresses(self):
        self.assertCaught("exporter-tls/kustomization.yaml",
                          self.in_patch(1, "serverName: gpuscope-exporter.gpuscope.svc", "insecureSkipVerify: false"),
                          "tlsConfig.serverName is missing")

    def test_a_web_config_naming_a_certificate_the_secret_lacks(self):
        self.assertCaught("exporter-tls/web-config-secret.yaml",
                          self.in_web_config("cert_file: /etc/gpuscope/tls.crt", "cert_file: /etc/gpuscope/cert.pem"),
                          "tls_server_config.cert_file '/etc/gpuscope/cert.pem' is no file")

    def test_a_web_config_key_exporter_toolkit_does_not_have(self):
        self.assertCaught("exporter-tls/web-config-secret.yaml",
                          self.in_web_config("tls_server_config:", "tls_config:"),
                          "'tls_config' is not a key of exporter-toolkit's web configuration",
                          "scheme https but the pods serve plain HTTP")

    def test_mutual_tls_without_a_client_certificate_for_prometheus(self):
        self.assertCaught("exporter-tls/web-config-secret.yaml",
                          self.in_web_config("min_version: TLS12", "min_version: TLS12\n  client_auth_type: "
                                             "RequireAndVerifyClientCert\n  client_ca_file: /etc/gpuscope/ca.crt"),
                          "client_ca_file '/etc/gpuscope/ca.crt' is no file",
                          "the pods require a client certificate and tlsConfig has no cert and keySecret")

    def test_a_secret_key_the_api_server_refuses(self):
        def change(docs):
            docs[0]["stringData"]["tls key"] = docs[0]["stringData"].pop("tls.key")
        self.assertCaught("exporter-tls/web-config-secret.yaml", change,
                          "key 'tls key' is not a valid Secret key",
                          "key_file '/etc/gpuscope/tls.key' is no file")

    def test_secret_data_as_kubectl_writes_it_is_read(self):
        # kubectl create secret / kustomize's secretGenerator write data in base64, in lines.
        def change(docs):
            text = docs[0].pop("stringData")
            docs[0]["data"] = {k: base64.encodebytes((v * 8).encode() if k != "web-config.yml" else v.encode())
                               .decode() for k, v in text.items()}
            assert "\n" in docs[0]["data"]["tls.key"].rstrip("\n")
        self.assertEqual(self.problems_with("exporter-tls/web-config-secret.yaml", change), "")

    def test_secret_data_that_is_not_base64(self):
        self.assertCaught("exporter-tls/scrape-secret.yaml",
                          lambda docs: docs[0].update(data={"token": "not base64!"}), "data.token: not base64")


if __name__ == "__main__":
    unittest.main()
