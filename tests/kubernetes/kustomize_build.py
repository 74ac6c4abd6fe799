#!/usr/bin/env python3
"""The objects `kubectl kustomize FOLDER` makes, for the part of kustomize that deploy/kubernetes/
uses, so that an overlay is validated as the objects it applies, offline and without kubectl:

- resources: files, and folders with a kustomization.yaml (built the same way);
- namespace: set on every object but a Namespace;
- patches: JSON 6902 operations (RFC 6902: add, remove, replace), inline (patch) or in a file
  (path), applied to every object its target (group, version, kind, name) matches.

Anything else in a kustomization is an error, never ignored: a field this does not build would
make the validated objects differ from the applied ones. test_manifests.py compares the result
with kubectl's own build where kubectl is installed.

    kustomize_build.py FOLDER     (prints the objects as YAML)
"""
import copy
import os
import sys

import yaml

FIELDS = {"apiVersion", "kind", "namespace", "resources", "patches"}


class BuildError(Exception):
    pass


def load_objects(path):
    with open(path, encoding="utf-8") as f:
        return [d for d in yaml.safe_load_all(f) if d is not None]


def build(folder):
    """The objects of the kustomization in FOLDER, in the order of its resources."""
    file = os.path.join(folder, "kustomization.yaml")
    try:
        (kustomization,) = load_objects(file)
    except (OSError, yaml.YAMLError, ValueError) as error:
        raise BuildError(f"{file}: {error}") from error
    unknown = sorted(set(kustomization) - FIELDS)
    if unknown:
        raise BuildError(f"{file}: {', '.join(unknown)}: not built by this validator "
                         f"(it builds {', '.join(sorted(FIELDS))}); add them to kustomize_build.py")
    objects = []
    for resource in kustomization.get("resources") or []:
        path = os.path.join(folder, resource)
        if os.path.isdir(path):
            objects.extend(build(path))
        elif os.path.isfile(path):
            objects.extend(load_objects(path))
        else:
            raise BuildError(f"{file}: resources: {resource!r} does not exist beside the kustomization")
    if "namespace" in kustomization:
        for doc in objects:
            if doc.get("kind") != "Namespace":
                doc.setdefault("metadata", {})["namespace"] = kustomization["namespace"]
    for index, patch in enumerate(kustomization.get("patches") or []):
        apply_patch(folder, f"{file}: patches.{index}", patch, objects)
    return objects


def matches(target, doc):
    api_version = doc.get("apiVersion", "")
    group, _, version = api_version.rpartition("/")
    have = {"group": group, "version": version, "kind": doc.get("kind"),
            "name": (doc.get("metadata") or {}).get("name"),
            "namespace": (doc.get("metadata") or {}).get("namespace")}
    return all(have.get(key) == value for key, value in target.items())


def apply_patch(folder, where, patch, objects):
    if "path" in patch:
        with open(os.path.join(folder, patch["path"]), encoding="utf-8") as f:
            text = f.read()
    else:
        text = patch.get("patch", "")
    operations = yaml.safe_load(text)
    if not isinstance(operations, list):
        raise BuildError(f"{where}: not a JSON 6902 patch (a list of operations); "
                         f"strategic merge patches are not built by this validator")
    target = patch.get("target") or {}
    chosen = [doc for doc in objects if matches(target, doc)]
    if not chosen:
        raise BuildError(f"{where}: target {target} matches no object of the build")
    for doc in chosen:
        for number, operation in enumerate(operations):
            try:
                json_patch(doc, operation)
            except (KeyError, IndexError, ValueError, TypeError) as error:
                raise BuildError(f"{where}: operation {number} ({operation.get('op')} "
                                 f"{operation.get('path')}): {error}") from error


def json_patch(doc, operation):
    """One RFC 6902 operation (add, remove, replace) on doc, in place."""
    op, path = operation.get("op"), operation.get("path", "")
    if op not in ("add", "remove", "replace"):
        raise ValueError(f"operation {op!r} is not built by this validator (add, remove, replace)")
    parts = [p.replace("~1", "/").replace("~0", "~") for p in path.split("/")[1:]]
    if not parts:
        raise ValueError("the whole document cannot be patched")
    parent = doc
    for part in parts[:-1]:
        parent = parent[int(part)] if isinstance(parent, list) else parent[part]
    last, value = parts[-1], copy.deepcopy(operation.get("value"))
    if isinstance(parent, list):
        if op == "add":
            parent.insert(len(parent) if last == "-" else int(last), value)
            return
        index = int(last)
        parent[index]  # an index past the end is an error, as in RFC 6902
        if op == "remove":
            del parent[index]
        else:
            parent[index] = value
        return
    if op != "add" and last not in parent:
        raise KeyError(f"{last!r} is not there to {op}")
    if op == "remove":
        del parent[last]
    else:
        parent[last] = value


def main():
    try:
        objects = build(sys.argv[1])
    except BuildError as error:
        print(error, file=sys.stderr)
        return 1
    yaml.safe_dump_all(objects, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
