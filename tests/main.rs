//! Every integration test in one binary (`cargo test --test suite`): each file under tests/ is a
//! module, so the crate and tests/common are compiled and linked once, not once per file. Run one
//! file's tests with its module path: `cargo test --test suite -- packaging::`.

mod common;

mod alerts_delivery;
mod alerts_lifecycle;
mod alerts_web;
mod architecture;
mod bad_objects;
mod browser;
mod cli;
mod cluster_add;
mod collector_crds;
mod collector_db_outage;
mod collector_edges;
mod collector_events;
mod collector_outage;
mod collector_rbac;
mod collector_retention;
mod collector_rounds;
mod collector_shards;
mod collector_stop;
mod collector_watch;
mod config_schema;
mod delivery;
mod demo_fleet;
mod dockerfile;
mod evaluate_cli;
mod evaluate_flux_rules;
mod evaluate_workloads;
mod faults_apiserver;
mod faults_postgres;
mod fuzz_inputs;
mod impact;
mod limits_connections;
mod limits_waits;
mod load;
mod openapi;
mod packaging;
mod pod_logs;
mod real_flux;
mod real_flux_fixtures;
mod replay;
mod security_access;
mod security_inputs;
mod security_secrets;
mod security_signin;
mod store;
mod web_api;
mod web_domain_cells;
mod web_domain_hint;
mod web_errors;
mod web_graph;
mod web_incidents;
mod web_pages;
mod web_wait;
