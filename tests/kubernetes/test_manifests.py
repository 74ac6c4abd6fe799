#!/usr/bin/env python3
"""deploy/kubernetes/ against the official schemas (validate_manifests.py), and the validator
against broken copies of the same manifests: each mistake below must be caught, with a message
that names it.

    python3 -m unittest tests/kubernetes/test_manifests.py   (ctest: kubernetes_manifests)
"""
import copy
import os
import re
import sys
import tempfile
import unittest

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
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
        # namespace, daemonset, service, servicemonitor; pvc, job, mpijob
        self.assertEqual(count, 7)

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


if __name__ == "__main__":
    unittest.main()
