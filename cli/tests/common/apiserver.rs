//! A Kubernetes API server on loopback, as much of one as `kubectl get`
//! needs: discovery (`/api`, `/apis`, each group version's resources), a
//! list of every object of a resource and a get of one, over plain HTTP.
//! What it holds and how each read fails is a fixture's: a resource answers
//! 403 (forbidden), 504 (`Timeout`), 500 (`InternalError`), or (a group
//! version marked unavailable) 503 from the aggregation layer, on discovery
//! as on every read, as kube-aggregator answers for an APIService that is
//! not Available; a resource it does not name is not served at all.
//!
//! The real kubectl runs against it (`KUBECONFIG` from [`ApiServer::kubeconfig`]),
//! so the capture block is tested with kubectl's own discovery, error
//! lines, klog output and go-template engine.

// A test's server: a panic is a failing test, and `Value` indexing on
// absent keys yields `null`, as the reads it serves expect.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;

use serde_json::{Value, json};

/// How a read of a resource or an object fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    Forbidden,
    Timeout,
    Failed,
}

impl Failure {
    pub fn parse(word: &str) -> Option<Self> {
        match word {
            "forbidden" => Some(Failure::Forbidden),
            "timeout" => Some(Failure::Timeout),
            "failed" => Some(Failure::Failed),
            _ => None,
        }
    }
}

/// What a resource answers.
#[derive(Debug, Clone)]
pub enum Answer {
    Objects(Vec<Value>),
    Fails(Failure),
}

/// One resource the server serves.
#[derive(Debug, Clone)]
pub struct Resource {
    pub group: String,
    pub version: String,
    pub plural: String,
    pub kind: String,
    pub namespaced: bool,
    /// Every object of it, or how a list of it fails.
    pub list: Answer,
    /// How a read of one object fails, by `namespace/name`.
    pub objects_fail: BTreeMap<String, Failure>,
}

/// What the server holds.
#[derive(Debug, Clone, Default)]
pub struct Contents {
    pub resources: Vec<Resource>,
    /// Group versions whose aggregated API does not answer
    /// (`apps.cozystack.io/v1alpha1`).
    pub unavailable: Vec<String>,
}

/// The server, answering until dropped with the test.
pub struct ApiServer {
    pub port: u16,
}

impl ApiServer {
    /// Serves `contents` on a loopback port, each connection on a thread.
    pub fn start(contents: Contents) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let contents = Arc::new(contents);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let contents = Arc::clone(&contents);
                std::thread::spawn(move || serve(stream, &contents));
            }
        });
        Self { port }
    }

    /// A kubeconfig for it, as `context`.
    pub fn kubeconfig(&self, context: &str) -> String {
        kubeconfig(&format!("http://127.0.0.1:{}", self.port), context)
    }
}

/// A kubeconfig whose `context` points at `server`, with a bearer token.
pub fn kubeconfig(server: &str, context: &str) -> String {
    json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "loopback", "cluster": {"server": server}}],
        "users": [{"name": "preflight", "user": {"token": "test-token"}}],
        "contexts": [{"name": context, "context": {"cluster": "loopback", "user": "preflight"}}],
        "current-context": context,
    })
    .to_string()
}

/// A loopback address nothing listens on, the same in every run (the
/// checklist quotes it): connections are refused. Port 9 is the discard
/// service's, which no test machine runs.
pub fn refused() -> String {
    "http://127.0.0.1:9".to_owned()
}

fn serve(stream: TcpStream, contents: &Contents) {
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    if reader.read_line(&mut line).is_err() {
        return;
    }
    // Headers, up to the blank line; a GET has no body.
    loop {
        let mut header = String::new();
        match reader.read_line(&mut header) {
            Ok(0) | Err(_) => break,
            Ok(_) if header.trim().is_empty() => break,
            Ok(_) => {}
        }
    }
    let path = line.split_whitespace().nth(1).unwrap_or("/");
    let path = path.split('?').next().unwrap_or(path);
    let (status, content_type, body) = answer(contents, path);
    let reason = match status {
        200 => "OK",
        403 => "Forbidden",
        404 => "Not Found",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Gateway Timeout",
    };
    let mut stream = reader.into_inner();
    let _ = write!(
        stream,
        "HTTP/1.1 {status} {reason}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
}

/// A `Status` failure, as the API server writes it.
fn status(code: u16, reason: &str, message: &str) -> (u16, &'static str, String) {
    let body = json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": message, "reason": reason, "code": code});
    (code, "application/json", body.to_string())
}

fn ok(body: Value) -> (u16, &'static str, String) {
    (200, "application/json", body.to_string())
}

fn not_found() -> (u16, &'static str, String) {
    status(
        404,
        "NotFound",
        "the server could not find the requested resource",
    )
}

fn group_version(group: &str, version: &str) -> String {
    if group.is_empty() {
        version.to_owned()
    } else {
        format!("{group}/{version}")
    }
}

fn answer(contents: &Contents, path: &str) -> (u16, &'static str, String) {
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    match parts.as_slice() {
        ["version"] => ok(json!({"major": "1", "minor": "33", "gitVersion": "v1.33.4"})),
        ["api"] => ok(json!({"kind": "APIVersions", "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}]})),
        ["apis"] => {
            let mut groups: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
            for resource in contents.resources.iter().filter(|r| !r.group.is_empty()) {
                let versions = groups.entry(&resource.group).or_default();
                if !versions.contains(&resource.version.as_str()) {
                    versions.push(&resource.version);
                }
            }
            for unavailable in &contents.unavailable {
                if let Some((group, version)) = unavailable.split_once('/') {
                    let versions = groups.entry(group).or_default();
                    if !versions.contains(&version) {
                        versions.push(version);
                    }
                }
            }
            let groups: Vec<Value> = groups
                .into_iter()
                .map(|(group, versions)| {
                    let versions: Vec<Value> = versions
                        .iter()
                        .map(|v| json!({"groupVersion": format!("{group}/{v}"), "version": v}))
                        .collect();
                    json!({"name": group, "versions": versions, "preferredVersion": versions[0]})
                })
                .collect();
            ok(json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}))
        }
        ["api", version, rest @ ..] => resources(contents, "", version, rest),
        ["apis", group, version, rest @ ..] => resources(contents, group, version, rest),
        _ => not_found(),
    }
}

/// A group version's discovery, or a read of one of its resources.
fn resources(
    contents: &Contents,
    group: &str,
    version: &str,
    rest: &[&str],
) -> (u16, &'static str, String) {
    let gv = group_version(group, version);
    if contents.unavailable.contains(&gv) {
        // kube-aggregator's answer for an APIService that is not Available.
        return (503, "text/plain", "service unavailable\n".to_owned());
    }
    let here: Vec<&Resource> = contents
        .resources
        .iter()
        .filter(|r| r.group == group && r.version == version)
        .collect();
    if here.is_empty() {
        return not_found();
    }
    let (namespace, rest) = match rest {
        ["namespaces", namespace, resource, more @ ..] => {
            let mut rest = vec![*resource];
            rest.extend(more);
            (Some(*namespace), rest)
        }
        _ => (None, rest.to_vec()),
    };
    let Some(plural) = rest.first() else {
        let list: Vec<Value> = here
            .iter()
            .map(|r| {
                json!({"name": r.plural, "singularName": r.kind.to_lowercase(), "namespaced": r.namespaced,
                    "kind": r.kind, "verbs": ["get", "list", "watch"]})
            })
            .collect();
        return ok(
            json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": list}),
        );
    };
    let Some(resource) = here.iter().find(|r| r.plural == *plural) else {
        return not_found();
    };
    // A namespace is a cluster-scoped object named in the path, not a scope.
    let (namespace, name) = match (rest.get(1), namespace) {
        (Some(name), namespace) => (namespace.unwrap_or_default(), Some(*name)),
        (None, namespace) => (namespace.unwrap_or_default(), None),
    };
    let denied = |failure: Failure, what: &str| match failure {
        Failure::Forbidden => status(
            403,
            "Forbidden",
            &format!(
                "{what} is forbidden: User \"system:serviceaccount:ops:preflight\" cannot {} resource \"{}\" in API group \"{group}\"{}",
                if name.is_some() { "get" } else { "list" },
                resource.plural,
                if namespace.is_empty() {
                    " at the cluster scope".to_owned()
                } else {
                    format!(" in the namespace \"{namespace}\"")
                }
            ),
        ),
        Failure::Timeout => status(
            504,
            "Timeout",
            &format!(
                "the server was unable to return a response in the time allotted, but may still be processing the request (get {})",
                resource.plural
            ),
        ),
        Failure::Failed => status(
            500,
            "InternalError",
            "an error on the server (\"\") has prevented the request from succeeding",
        ),
    };
    match name {
        None => match &resource.list {
            Answer::Fails(failure) => denied(*failure, &resource.plural),
            Answer::Objects(objects) => {
                let items: Vec<&Value> = objects
                    .iter()
                    .filter(|o| namespace.is_empty() || o["metadata"]["namespace"] == namespace)
                    .collect();
                ok(
                    json!({"apiVersion": gv, "kind": format!("{}List", resource.kind),
                    "metadata": {"resourceVersion": "4711"}, "items": items}),
                )
            }
        },
        Some(name) => {
            let key = if namespace.is_empty() {
                name.to_owned()
            } else {
                format!("{namespace}/{name}")
            };
            if let Some(failure) = resource.objects_fail.get(&key) {
                return denied(*failure, &format!("{} \"{name}\"", resource.plural));
            }
            match &resource.list {
                Answer::Fails(failure) => {
                    denied(*failure, &format!("{} \"{name}\"", resource.plural))
                }
                Answer::Objects(objects) => objects
                    .iter()
                    .find(|o| {
                        o["metadata"]["name"] == name
                            && (!resource.namespaced || o["metadata"]["namespace"] == namespace)
                    })
                    .map_or_else(
                        || {
                            status(
                                404,
                                "NotFound",
                                &format!("{} \"{name}\" not found", resource.plural),
                            )
                        },
                        |object| ok(object.clone()),
                    ),
            }
        }
    }
}
