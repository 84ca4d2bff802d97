#!/usr/bin/env python3
"""A stand-in for kubectl, for cli/tests/wiring.rs: answers the capture
block's calls from the cluster in $FAKE_CLUSTER (JSON: "context", "lists"
by resource, "objects" by resource/namespace/name, "raw" discovery
documents by path, "access": the allowed [user, verb, group, resource,
name] of SubjectAccessReviews), and executes every `-o go-template=` with
Go's text/template through Helm's SDK, the engine kubectl uses. A value
"forbidden", "timeout" or "failed" in place of objects fails the call with
kubectl's words for it; a resource it does not know is not served."""

import json
import re
import os
import sys

sys.path.insert(0, os.path.join(os.environ["REPOSITORY"], "oracle"))

CLUSTER = json.load(open(os.environ["FAKE_CLUSTER"]))
FAILURES = {
    "forbidden": 'Error from server (Forbidden): {what} is forbidden: User "admin" cannot get resource',
    "timeout": "Unable to connect to the server: net/http: request canceled (Client.Timeout exceeded while awaiting headers)",
    "failed": 'Error from server (InternalError): an error on the server ("") has prevented the request from succeeding',
}


def fail(how, what):
    print(FAILURES[how].format(what=what), file=sys.stderr)
    sys.exit(1)


def output(obj, form):
    if form.startswith("go-template="):
        from cozystack_oracle import sdk

        template = form[len("go-template="):]
        sys.stdout.write(sdk.go_template(template, obj))
    elif form.startswith("jsonpath="):
        value = obj
        for key in form[len("jsonpath="):].strip("{}").strip(".").split("."):
            value = value.get(key, "") if isinstance(value, dict) else ""
        sys.stdout.write(str(value))
    else:
        sys.stdout.write(json.dumps(obj) + "\n")


def main(args):
    if args[:2] == ["config", "current-context"]:
        print(CLUSTER["context"])
        return
    words, form, namespace, path, files = [], "yaml", None, None, []
    rest = iter(args)
    for arg in rest:
        if arg.startswith("--request-timeout") or arg in ("--all-namespaces", "--ignore-not-found"):
            continue
        if arg in ("-o", "--output"):
            form = next(rest)
        elif arg in ("-n", "--namespace"):
            namespace = next(rest)
        elif arg == "--raw":
            path = next(rest)
        elif arg == "-f":
            files.append(next(rest))
        else:
            words.append(arg)
    verb = words[0]
    if verb == "get" and path is not None:
        answer = CLUSTER["raw"].get(path)
        if answer is None:
            fail_not_found(path)
        if isinstance(answer, str):
            fail(answer, path)
        print(json.dumps(answer))
        return
    if verb == "create":
        import yaml

        allowed = [tuple(a) for a in CLUSTER["access"]]
        for name in files:
            for review in yaml.safe_load_all(open(name)):
                if not review:
                    continue
                spec = review["spec"]
                attributes = spec["resourceAttributes"]
                key = (spec["user"], attributes["verb"], attributes.get("group", ""),
                       attributes["resource"], attributes.get("name", ""))
                review["status"] = {"allowed": key in allowed}
                output(review, form)
        return
    # `deployments.v1.apps`, as the capture names a kind at one version, is
    # `deployments.apps` to this cluster, which holds one version of each.
    resource = re.sub(r"^([^.]+)\.v[0-9]+(?:(?:alpha|beta)[0-9]+)?(?=\.|$)", r"\1", words[1])
    name = words[2] if len(words) > 2 else None
    if name is not None:
        answer = CLUSTER["objects"].get(f"{resource}/{namespace}/{name}" if namespace else f"{resource}/{name}")
        if isinstance(answer, str):
            fail(answer, resource)
        listed = CLUSTER["lists"].get(resource)
        if answer is None and isinstance(listed, list):
            answer = next((o for o in listed if o["metadata"]["name"] == name
                           and o["metadata"].get("namespace") == namespace), None)
        if answer is not None:
            output(answer, form)
        elif resource not in CLUSTER["lists"] and "." in resource:
            print(f'error: the server doesn\'t have a resource type "{resource.split(".")[0]}"', file=sys.stderr)
            sys.exit(1)
        return
    items = CLUSTER["lists"].get(resource)
    if items is None:
        print(f'error: the server doesn\'t have a resource type "{resource.split(".")[0]}"', file=sys.stderr)
        sys.exit(1)
    if isinstance(items, str):
        fail(items, resource)
    output({"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items}, form)


def fail_not_found(path):
    print(f"Error from server (NotFound): the server could not find the requested resource ({path})", file=sys.stderr)
    sys.exit(1)


main(sys.argv[1:])
