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
kustomization names files that exist. Secrets: keys the API server takes, data in base64; a
Secret volume or a ServiceMonitor's SecretKeySelector names a Secret (and key) of the manifests.
gpuscope's web configuration: `serve --web-config FILE` reads a file of a mounted Secret, in
exporter-toolkit's format, whose certificate files are mounted too; the probes work with it (no
httpGet where every path asks for a password or a client certificate); the ServiceMonitor
scrapes it as it serves (https for TLS, basicAuth for basic_auth_users, a client certificate
for mutual TLS, a serverName to check the certificate against).

A kustomization with patches (an overlay) is also built (kustomize_build.py) and the objects it
makes are validated the same way, on their own.

Prints one line per problem (FILE: KIND/NAME: where: what) and exits 1 if there is any.
Needs python3-yaml and python3-jsonschema (Debian 12: jsonschema 4.10).
"""
import argparse
import base64
import binascii
import functools
import json
import os
import posixpath
import re
import shlex
import sys

import jsonschema
import yaml

import kustomize_build

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


SECRET_KEY = re.compile(r"^[-._a-zA-Z0-9]+$")
# exporter-toolkit's web configuration: its top-level keys, and the files its TLS part names.
WEB_CONFIG_KEYS = ("tls_server_config", "http_server_config", "basic_auth_users")
WEB_CONFIG_FILES = ("cert_file", "key_file", "client_ca_file")
CLIENT_CERT_REQUIRED = ("RequireAnyClientCert", "RequireAndVerifyClientCert")


def secret_contents(doc):
    """(key -> text, problems) of a Secret: data decoded from base64, stringData as it is."""
    contents, problems = {}, []
    for field in ("data", "stringData"):
        for key, value in ((doc.get(field) or {}) if isinstance(doc.get(field), dict) else {}).items():
            if not SECRET_KEY.match(str(key)):
                problems.append(f"{field}: key {key!r} is not a valid Secret key (letters, digits, '-', '_', '.')")
            if field == "data":
                try:
                    # Line breaks are allowed (Go's base64 decoder skips them; kustomize writes them).
                    value = re.sub(r"[\r\n]", "", str(value))
                    value = base64.b64decode(value, validate=True).decode("utf-8", "replace")
                except (binascii.Error, ValueError):
                    problems.append(f"data.{key}: not base64 (put text in stringData instead)")
                    value = None
            contents[key] = value
    return contents, problems


def mounted_files(pod, container, secrets, namespace):
    """path -> text of every file the container sees from a Secret volume (None: unreadable)."""
    files = {}
    volumes = {v.get("name"): v for v in pod.get("volumes") or []}
    for mount in container.get("volumeMounts") or []:
        source = (volumes.get(mount.get("name")) or {}).get("secret")
        contents = secrets.get((namespace, (source or {}).get("secretName")))
        if contents is None:
            continue
        items = source.get("items") or [{"key": key, "path": key} for key in contents]
        for item in items:
            if mount.get("subPath"):
                if item.get("path") == mount["subPath"]:
                    files[mount["mountPath"]] = contents.get(item.get("key"))
            else:
                files[posixpath.join(mount["mountPath"], item.get("path", ""))] = contents.get(item.get("key"))
    return files


def web_config_path(container):
    words = command_of(container)
    for index, word in enumerate(words):
        if word == "--web-config" and index + 1 < len(words):
            return words[index + 1]
        if word.startswith("--web-config="):
            return word.split("=", 1)[1]
    return None


def web_config_of(pod, container, secrets, namespace):
    """(web configuration or None, problems) of a container that runs serve --web-config FILE:
    the file must come from a Secret the manifests have, be exporter-toolkit's YAML, and name
    certificate files the container has too."""
    path = web_config_path(container)
    if path is None:
        return None, []
    files = mounted_files(pod, container, secrets, namespace)
    if files.get(path) is None:
        return None, [f"--web-config {path!r} is no file of a Secret mounted in the container "
                      f"({', '.join(sorted(files)) or 'none mounted'})"]
    try:
        config = yaml.safe_load(files[path]) or {}
    except yaml.YAMLError as error:
        return None, [f"--web-config {path!r} is not YAML: {error}"]
    if not isinstance(config, dict):
        return None, [f"--web-config {path!r} is not a mapping of exporter-toolkit's keys"]
    problems = [f"--web-config {path!r}: {key!r} is not a key of exporter-toolkit's web configuration "
                f"({', '.join(WEB_CONFIG_KEYS)})" for key in config if key not in WEB_CONFIG_KEYS]
    tls = config.get("tls_server_config") or {}
    for key in WEB_CONFIG_FILES:
        if key in tls and tls[key] not in files:
            problems.append(f"--web-config {path!r}: tls_server_config.{key} {tls[key]!r} is no file "
                            f"the container has from a mounted Secret")
    return config, problems + list(probe_problems(container, config))


def probe_problems(container, config):
    """What the kubelet's probes meet on a server with this web configuration."""
    tls = config.get("tls_server_config") or {}
    for name in ("startupProbe", "readinessProbe", "livenessProbe"):
        get = (container.get(name) or {}).get("httpGet")
        if not get:
            continue
        if tls and str(get.get("scheme", "HTTP")).upper() != "HTTPS":
            yield (f"{name}: httpGet speaks HTTP to a port that serves TLS (the web configuration has "
                   f"tls_server_config): use a tcpSocket probe")
        headers = {str(h.get("name", "")).lower() for h in get.get("httpHeaders") or []}
        if config.get("basic_auth_users") and "authorization" not in headers:
            yield (f"{name}: httpGet without a password on a server that asks for one on every path "
                   f"(basic_auth_users): the kubelet gets 401; use a tcpSocket probe")
        if tls.get("client_auth_type") in CLIENT_CERT_REQUIRED:
            yield (f"{name}: httpGet to a server that requires a client certificate "
                   f"({tls['client_auth_type']}), which the kubelet has none of: use a tcpSocket probe")


def secret_selectors(endpoint):
    """(where, selector) of every SecretKeySelector in a ServiceMonitor endpoint."""
    tls = endpoint.get("tlsConfig") or {}
    auth = endpoint.get("basicAuth") or {}
    found = [("basicAuth.username", auth.get("username")), ("basicAuth.password", auth.get("password")),
             ("tlsConfig.ca.secret", (tls.get("ca") or {}).get("secret")),
             ("tlsConfig.cert.secret", (tls.get("cert") or {}).get("secret")),
             ("tlsConfig.keySecret", tls.get("keySecret")),
             ("bearerTokenSecret", endpoint.get("bearerTokenSecret")),
             ("authorization.credentials", (endpoint.get("authorization") or {}).get("credentials"))]
    return [(where, selector) for where, selector in found if selector]


def check_endpoint_security(where, endpoint, configs, secrets, namespace):
    """A ServiceMonitor endpoint against the web configurations of the pods it scrapes, and the
    Secrets it names (the operator reads them from its own namespace)."""
    for place, selector in secret_selectors(endpoint):
        contents = secrets.get((namespace, selector.get("name")))
        if selector.get("optional"):
            continue
        if contents is None:
            yield f"{where}.{place}: Secret {selector.get('name')!r} is not in the manifests (namespace {namespace})"
        elif selector.get("key") not in contents:
            yield f"{where}.{place}: Secret {selector.get('name')!r} has no key {selector.get('key')!r}"
    tls = [c for c in configs if c.get("tls_server_config")]
    scheme = str(endpoint.get("scheme", "http")).lower()
    client = endpoint.get("tlsConfig") or {}
    if tls and scheme != "https":
        yield f"{where}: scheme {scheme} but the pods serve TLS (their web configuration has tls_server_config)"
    if not tls and scheme == "https":
        yield f"{where}: scheme https but the pods serve plain HTTP (no web configuration with tls_server_config)"
    if tls and scheme == "https" and not client.get("serverName") and not client.get("insecureSkipVerify"):
        yield (f"{where}: tlsConfig.serverName is missing: Prometheus would check the certificate "
               f"against each pod's IP address")
    if any(c.get("basic_auth_users") for c in configs) and not endpoint.get("basicAuth"):
        yield f"{where}: the pods ask for a password (basic_auth_users) and there is no basicAuth"
    if any((c.get("tls_server_config") or {}).get("client_auth_type") in CLIENT_CERT_REQUIRED for c in configs) \
            and not (client.get("cert") and client.get("keySecret")):
        yield f"{where}: the pods require a client certificate and tlsConfig has no cert and keySecret"


def check_semantics(docs, version):
    """docs: (file, doc). Yields (file, doc, message)."""
    services = [(f, d) for f, d in docs if d.get("kind") == "Service"]
    workloads = [(f, d) for f, d in docs if any(True for _ in pod_specs(d))]
    secrets = {}
    for file, doc in docs:
        if doc.get("kind") == "Secret":
            contents, problems = secret_contents(doc)
            secrets[((doc.get("metadata") or {}).get("namespace"), (doc.get("metadata") or {}).get("name"))] = contents
            yield from ((file, doc, m) for m in problems)
    for file, doc in docs:
        meta = doc.get("metadata") or {}
        name = meta.get("name", "")
        if not DNS_LABEL.match(name) or len(name) > 63:
            yield file, doc, f"metadata.name {name!r} is not a DNS label (lower case letters, digits, '-')"
        for where, pod, _ in pod_specs(doc):
            yield from ((file, doc, f"{where}.spec.{m}")
                        for m in check_pod(pod, version, secrets, meta.get("namespace")))
        if doc.get("kind") == "DaemonSet":
            selector = ((doc.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
            labels = (((doc.get("spec") or {}).get("template") or {}).get("metadata") or {}).get("labels") or {}
            if not selects(selector, labels):
                yield file, doc, "spec.selector.matchLabels does not select spec.template's labels"
        if doc.get("kind") == "Service":
            pods = selected_pods(doc, workloads)
            if not pods:
                yield file, doc, f"spec.selector {(doc.get('spec') or {}).get('selector')} selects no pod template in the same namespace"
            port_names = {p.get("name") for pod, _ in pods for _, c in containers(pod)
                          for p in c.get("ports") or []}
            for port in (doc.get("spec") or {}).get("ports") or []:
                target = port.get("targetPort")
                if isinstance(target, str) and pods and target not in port_names:
                    yield file, doc, f"spec.ports: targetPort {target!r} is no container port of the pods it selects"
        if doc.get("kind") == "ServiceMonitor":
            yield from ((file, doc, m) for m in check_servicemonitor(doc, services, workloads, secrets))
        if doc.get("kind") == "MPIJob":
            yield from ((file, doc, m) for m in check_mpijob(doc))


def check_pod(pod, version, secrets, namespace):
    volumes = {v.get("name") for v in pod.get("volumes") or []}
    for volume in pod.get("volumes") or []:
        source = volume.get("secret")
        if source and not source.get("optional") and (namespace, source.get("secretName")) not in secrets:
            yield (f"volumes: {volume.get('name')!r} is Secret {source.get('secretName')!r}, which is not in the "
                   f"manifests (namespace {namespace})")
    names = set()
    for cwhere, container in containers(pod):
        if container.get("name") in names:
            yield f"{cwhere}: container name {container.get('name')!r} twice"
        names.add(container.get("name"))
        for mount in container.get("volumeMounts") or []:
            if mount.get("name") not in volumes:
                yield (f"{cwhere}: volumeMount {mount.get('name')!r} "
                       f"is not a volume of the pod ({', '.join(sorted(volumes)) or 'none'})")
        image = container.get("image", "")
        if version and re.match(r"^(.*/)?gpuscope:", image) and not image.endswith(":" + version):
            yield f"{cwhere}: image {image!r} is not gpuscope {version} (the version in CMakeLists.txt)"
        _, problems = web_config_of(pod, container, secrets, namespace)
        yield from (f"{cwhere}: {m}" for m in problems)


def selected_pods(service, workloads):
    """(pod spec, labels) of the pod templates a Service selects in its namespace."""
    selector = (service.get("spec") or {}).get("selector") or {}
    namespace = (service.get("metadata") or {}).get("namespace")
    return [(pod, labels) for _, w in workloads for _, pod, labels in pod_specs(w)
            if (w.get("metadata") or {}).get("namespace") == namespace and selects(selector, labels)]


def check_servicemonitor(doc, services, workloads, secrets):
    meta, spec = doc.get("metadata") or {}, doc.get("spec") or {}
    selector = (spec.get("selector") or {}).get("matchLabels") or {}
    namespaces = (spec.get("namespaceSelector") or {}).get("matchNames") or [meta.get("namespace")]
    chosen = [s for _, s in services if selects(selector, (s.get("metadata") or {}).get("labels") or {})
              and (s.get("metadata") or {}).get("namespace") in namespaces]
    if not chosen:
        yield f"spec.selector {selector} selects no Service in {namespaces}"
    for index, endpoint in enumerate(spec.get("endpoints") or []):
        ports = [(s, p) for s in chosen for p in (s.get("spec") or {}).get("ports") or []
                 if p.get("name") == endpoint.get("port")]
        if chosen and not ports:
            yield f"spec.endpoints: port {endpoint.get('port')!r} is not a port of the Service"
        configs = []
        for service, port in ports:
            target = port.get("targetPort", port.get("port"))
            for pod, _ in selected_pods(service, workloads):
                for _, container in containers(pod):
                    if any(target in (p.get("name"), p.get("containerPort")) for p in container.get("ports") or []):
                        config, _ = web_config_of(pod, container, secrets,
                                                  (service.get("metadata") or {}).get("namespace"))
                        configs.append(config or {})
        yield from check_endpoint_security(f"spec.endpoints.{index}", endpoint, configs, secrets,
                                           meta.get("namespace"))


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
    problems, docs, overlays = [], [], []
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
                if doc.get("patches"):
                    overlays.append(file)
                continue
            label = f"{doc.get('kind')}/{(doc.get('metadata') or {}).get('name')}"
            problems.extend(f"{file}: {label}: {m}" for m in schemas.errors(doc))
            docs.append((file, doc))
    for file, doc, message in check_semantics(docs, version):
        problems.append(f"{file}: {doc.get('kind')}/{(doc.get('metadata') or {}).get('name')}: {message}")
    count = len(docs)
    for file in overlays:
        built, built_problems = validate_build(os.path.dirname(file), schemas, version)
        count += built
        problems.extend(built_problems)
    return count, problems


def validate_build(folder, schemas, version):
    """An overlay as the objects it applies (kustomize_build): schemas and the checks above, on
    the built objects alone. Returns (number of objects, problem lines)."""
    where = f"{os.path.join(folder, 'kustomization.yaml')} (built)"
    try:
        objects = kustomize_build.build(folder)
    except (kustomize_build.BuildError, OSError, yaml.YAMLError) as error:
        return 0, [f"{where}: {error}"]
    problems = []
    for doc in objects:
        label = f"{doc.get('kind')}/{(doc.get('metadata') or {}).get('name')}"
        problems.extend(f"{where}: {label}: {m}" for m in schemas.errors(doc))
    for _, doc, message in check_semantics([(where, d) for d in objects], version):
        problems.append(f"{where}: {doc.get('kind')}/{(doc.get('metadata') or {}).get('name')}: {message}")
    return len(objects), problems


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
