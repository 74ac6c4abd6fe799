#!/usr/bin/env python3
"""Validates Kubernetes manifests against the official schemas in tests/fixtures/kubernetes/
(their README says which releases), strictly, then checks what the API server and the operators
would check and a schema cannot say.

    validate_manifests.py [--version V] FILE_OR_DIR...

Schemas: Kubernetes' OpenAPI v2 definitions for the built-in kinds, the CRDs' openAPIV3Schema
for MPIJob and ServiceMonitor. Strict, as `kubectl apply --validate=strict` is: a field the
schema does not know is an error (a misspelt field is otherwise silently dropped by the API
server). int-or-string and quantity fields take what the API server takes.

Checks beyond the schema: names are DNS labels; a DaemonSet's selector selects its own pods;
every volume mount names a volume of its pod; a Service selects pods of some workload and
targets ports they name; a ServiceMonitor selects a Service, in a namespace it looks at, by a
port it has; an MPIJob's mpirun -np is its slots (slotsPerWorker x workers) and each worker asks
for slotsPerWorker GPUs; the gpuscope image's tag is gpuscope's version (--version); a
kustomization names files that exist.

Prints one line per problem (FILE: KIND/NAME: where: what) and exits 1 if there is any.
Needs python3-yaml and python3-jsonschema (Debian 12: jsonschema 4.10).
"""
import argparse
import functools
import json
import os
import re
import shlex
import sys

import jsonschema
import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "fixtures", "kubernetes")
DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
# resource.Quantity's grammar (k8s.io/apimachinery/pkg/api/resource).
QUANTITY = re.compile(r"^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)(([KMGTPE]i)|[numkMGTPE]|([eE][+-]?[0-9]+))?$")
QUANTITY_SCHEMA = {"anyOf": [{"type": "number"}, {"type": "string", "pattern": QUANTITY.pattern}]}


def strict(node):
    """Draft-4 schema from a Kubernetes one: no unknown fields, the API's int-or-string and
    quantity, OpenAPI's nullable."""
    if isinstance(node, list):
        return [strict(item) for item in node]
    if not isinstance(node, dict):
        return node
    if node.get("x-kubernetes-int-or-string") or node.get("format") == "int-or-string":
        text = {"type": "string"}
        if "pattern" in node:
            text["pattern"] = node["pattern"]
        return {"anyOf": [{"type": "integer"}, text]}
    out = {key: strict(value) for key, value in node.items()}
    if "properties" in out and "additionalProperties" not in out and \
            not node.get("x-kubernetes-preserve-unknown-fields"):
        out["additionalProperties"] = False
    if node.get("nullable") and isinstance(out.get("type"), str):
        out["type"] = [out["type"], "null"]
    return out


class Schemas:
    def __init__(self, fixtures):
        with open(os.path.join(fixtures, "kubernetes-openapi-subset.json"), encoding="utf-8") as f:
            openapi = json.load(f)
        definitions = {}
        for name, definition in openapi["definitions"].items():
            if name == "io.k8s.apimachinery.pkg.api.resource.Quantity":
                definitions[name] = dict(QUANTITY_SCHEMA)
            else:
                definitions[name] = strict(definition)
        self.root = {"definitions": definitions}
        self.by_kind = {}  # (apiVersion, kind) -> schema
        for name, definition in openapi["definitions"].items():
            for gvk in definition.get("x-kubernetes-group-version-kind", []):
                api_version = f"{gvk['group']}/{gvk['version']}" if gvk["group"] else gvk["version"]
                self.by_kind[(api_version, gvk["kind"])] = {"$ref": f"#/definitions/{name}"}
        for crd_file in sorted(os.listdir(fixtures)):
            if not crd_file.endswith(".yaml"):
                continue
            with open(os.path.join(fixtures, crd_file), encoding="utf-8") as f:
                for crd in yaml.safe_load_all(f):
                    if not crd or crd.get("kind") != "CustomResourceDefinition":
                        continue
                    spec = crd["spec"]
                    for version in spec["versions"]:
                        if not version.get("served", True):
                            continue
                        schema = strict(version["schema"]["openAPIV3Schema"])
                        # metadata is the API server's, whatever the CRD says of it.
                        schema.setdefault("properties", {})["metadata"] = {
                            "$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}
                        api_version = f"{spec['group']}/{version['name']}"
                        self.by_kind[(api_version, spec["names"]["kind"])] = schema

    def errors(self, doc):
        key = (doc.get("apiVersion"), doc.get("kind"))
        if key not in self.by_kind:
            known = ", ".join(sorted(f"{k} ({v})" for v, k in self.by_kind))
            return [f"apiVersion {key[0]!r} kind {key[1]!r} is not one of the known kinds: {known}"]
        schema = dict(self.by_kind[key])
        schema["definitions"] = self.root["definitions"]
        validator = jsonschema.Draft4Validator(schema)
        found = []
        for error in sorted(validator.iter_errors(doc), key=lambda e: [str(p) for p in e.absolute_path]):
            where = ".".join(str(p) for p in error.absolute_path) or "(top)"
            found.append(f"{where}: {reason(error)}")
        return found


def reason(error):
    """What is wrong, in the API's terms: a quantity or an int-or-string by name, else the most
    specific reason of an anyOf failure."""
    if error.schema == QUANTITY_SCHEMA:
        return f"{error.instance!r} is not a quantity (such as 64Mi, 1Gi, 500m, 2)"
    types = [s.get("type") for s in error.schema.get("anyOf", []) if isinstance(s, dict)]
    if sorted(types) == ["integer", "string"]:
        return f"{error.instance!r} is neither an integer nor a string of the right form"
    while error.context:
        error = max(error.context, key=lambda e: len(list(e.absolute_path)))
    return error.message


def pod_specs(doc):
    """(where, pod spec, pod labels) of every pod template in a manifest."""
    kind, spec = doc.get("kind"), doc.get("spec") or {}
    if kind in ("DaemonSet", "Deployment", "StatefulSet", "Job"):
        template = spec.get("template") or {}
        yield "spec.template", template.get("spec") or {}, (template.get("metadata") or {}).get("labels") or {}
    elif kind == "MPIJob":
        for role, replica in (spec.get("mpiReplicaSpecs") or {}).items():
            template = (replica or {}).get("template") or {}
            yield (f"spec.mpiReplicaSpecs.{role}.template", template.get("spec") or {},
                   (template.get("metadata") or {}).get("labels") or {})


def containers(pod):
    for group in ("initContainers", "containers"):
        for index, container in enumerate(pod.get(group) or []):
            yield f"{group}.{index}", container


def command_of(container):
    """The container's command line as words: a `sh -c SCRIPT` is split into SCRIPT's words."""
    words = list(container.get("command") or []) + list(container.get("args") or [])
    if len(words) >= 3 and os.path.basename(words[0]) in ("sh", "bash") and words[1] == "-c":
        try:
            return shlex.split(words[2], comments=True)
        except ValueError:
            return words
    return words


def selects(selector, labels):
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


def check_semantics(docs, version):
    """docs: (file, doc). Yields (file, doc, message)."""
    services = [(f, d) for f, d in docs if d.get("kind") == "Service"]
    workloads = [(f, d) for f, d in docs if any(True for _ in pod_specs(d))]
    for file, doc in docs:
        meta = doc.get("metadata") or {}
        name = meta.get("name", "")
        if not DNS_LABEL.match(name) or len(name) > 63:
            yield file, doc, f"metadata.name {name!r} is not a DNS label (lower case letters, digits, '-')"
        for where, pod, labels in pod_specs(doc):
            volumes = {v.get("name") for v in pod.get("volumes") or []}
            names = set()
            for cwhere, container in containers(pod):
                if container.get("name") in names:
                    yield file, doc, f"{where}.spec.{cwhere}: container name {container.get('name')!r} twice"
                names.add(container.get("name"))
                for mount in container.get("volumeMounts") or []:
                    if mount.get("name") not in volumes:
                        yield file, doc, (f"{where}.spec.{cwhere}: volumeMount {mount.get('name')!r} "
                                          f"is not a volume of the pod ({', '.join(sorted(volumes)) or 'none'})")
                image = container.get("image", "")
                if version and re.match(r"^(.*/)?gpuscope:", image) and not image.endswith(":" + version):
                    yield file, doc, (f"{where}.spec.{cwhere}: image {image!r} is not gpuscope {version} "
                                      f"(the version in CMakeLists.txt)")
        if doc.get("kind") == "DaemonSet":
            selector = ((doc.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
            labels = (((doc.get("spec") or {}).get("template") or {}).get("metadata") or {}).get("labels") or {}
            if not selects(selector, labels):
                yield file, doc, "spec.selector.matchLabels does not select spec.template's labels"
        if doc.get("kind") == "Service":
            selector = (doc.get("spec") or {}).get("selector") or {}
            pods = [(pod, labels) for _, w in workloads for _, pod, labels in pod_specs(w)
                    if (w.get("metadata") or {}).get("namespace") == meta.get("namespace") and
                    selects(selector, labels)]
            if not pods:
                yield file, doc, f"spec.selector {selector} selects no pod template in the same namespace"
            port_names = {p.get("name") for pod, _ in pods for _, c in containers(pod)
                          for p in c.get("ports") or []}
            for port in (doc.get("spec") or {}).get("ports") or []:
                target = port.get("targetPort")
                if isinstance(target, str) and pods and target not in port_names:
                    yield file, doc, f"spec.ports: targetPort {target!r} is no container port of the pods it selects"
        if doc.get("kind") == "ServiceMonitor":
            spec = doc.get("spec") or {}
            selector = (spec.get("selector") or {}).get("matchLabels") or {}
            namespaces = (spec.get("namespaceSelector") or {}).get("matchNames") or [meta.get("namespace")]
            chosen = [s for _, s in services if selects(selector, (s.get("metadata") or {}).get("labels") or {})
                      and (s.get("metadata") or {}).get("namespace") in namespaces]
            if not chosen:
                yield file, doc, f"spec.selector {selector} selects no Service in {namespaces}"
            ports = {p.get("name") for s in chosen for p in (s.get("spec") or {}).get("ports") or []}
            for endpoint in spec.get("endpoints") or []:
                if chosen and endpoint.get("port") not in ports:
                    yield file, doc, f"spec.endpoints: port {endpoint.get('port')!r} is not a port of the Service"
        if doc.get("kind") == "MPIJob":
            yield from ((file, doc, m) for m in check_mpijob(doc))


def check_mpijob(doc):
    spec = doc.get("spec") or {}
    replicas = spec.get("mpiReplicaSpecs") or {}
    # What the MPI Operator's validation refuses.
    for role in replicas:
        if role not in ("Launcher", "Worker"):
            yield f"spec.mpiReplicaSpecs: {role!r} is not a role (Launcher or Worker)"
    if "Launcher" not in replicas:
        yield "spec.mpiReplicaSpecs: there is no Launcher"
    elif (replicas["Launcher"] or {}).get("replicas", 1) != 1:
        yield "spec.mpiReplicaSpecs.Launcher: replicas must be 1"
    slots = spec.get("slotsPerWorker", 1)
    workers = (replicas.get("Worker") or {}).get("replicas", 1)
    launcher = (replicas.get("Launcher") or {}).get("template") or {}
    for container in (launcher.get("spec") or {}).get("containers") or []:
        words = command_of(container)
        for i, word in enumerate(words):
            if os.path.basename(word) == "mpirun":
                rest = words[i + 1:]
                for j, option in enumerate(rest):
                    if option in ("-np", "-n", "--np") and j + 1 < len(rest):
                        if rest[j + 1] != str(slots * workers):
                            yield (f"spec.mpiReplicaSpecs.Launcher: mpirun -np {rest[j + 1]} but there are "
                                   f"{slots * workers} slots (slotsPerWorker {slots} x {workers} workers)")
    worker = (replicas.get("Worker") or {}).get("template") or {}
    for container in (worker.get("spec") or {}).get("containers") or []:
        gpus = ((container.get("resources") or {}).get("limits") or {}).get("nvidia.com/gpu")
        if gpus is not None and str(gpus) != str(slots):
            yield (f"spec.mpiReplicaSpecs.Worker: container {container.get('name')!r} asks for {gpus} GPUs "
                   f"but slotsPerWorker is {slots} (one rank per GPU)")


def check_kustomization(file, doc):
    folder = os.path.dirname(file)
    for resource in doc.get("resources") or []:
        if not os.path.exists(os.path.join(folder, resource)):
            yield f"resources: {resource!r} does not exist beside the kustomization"


def yaml_files(paths):
    for path in paths:
        if os.path.isdir(path):
            for folder, _, names in sorted(os.walk(path)):
                for name in sorted(names):
                    if name.endswith((".yaml", ".yml")):
                        yield os.path.join(folder, name)
        else:
            yield path


@functools.lru_cache(maxsize=None)
def schemas_in(fixtures):
    return Schemas(fixtures)


def validate(paths, version=None, fixtures=FIXTURES):
    """Returns (number of objects checked, list of problem lines)."""
    schemas = schemas_in(fixtures)
    problems, docs = [], []
    for file in yaml_files(paths):
        try:
            with open(file, encoding="utf-8") as f:
                loaded = [d for d in yaml.safe_load_all(f) if d is not None]
        except (OSError, yaml.YAMLError) as error:
            problems.append(f"{file}: {error}")
            continue
        for doc in loaded:
            if not isinstance(doc, dict):
                problems.append(f"{file}: a document that is not a mapping")
                continue
            if doc.get("kind") == "Kustomization":
                problems.extend(f"{file}: Kustomization: {m}" for m in check_kustomization(file, doc))
                continue
            label = f"{doc.get('kind')}/{(doc.get('metadata') or {}).get('name')}"
            problems.extend(f"{file}: {label}: {m}" for m in schemas.errors(doc))
            docs.append((file, doc))
    for file, doc, message in check_semantics(docs, version):
        problems.append(f"{file}: {doc.get('kind')}/{(doc.get('metadata') or {}).get('name')}: {message}")
    return len(docs), problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--version", help="gpuscope's version: the gpuscope image's tag must be it")
    parser.add_argument("paths", nargs="+")
    args = parser.parse_args()
    count, problems = validate(args.paths, args.version)
    for line in problems:
        print(line)
    print(f"{count} objects checked, {len(problems)} problems")
    return 1 if problems or count == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
