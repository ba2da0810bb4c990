//! Names resolved by the service itself, never by the sandbox: the addresses returned are the
//! ones connected to, and a name with any denied address is refused whole (DNS rebinding).

use crate::{addresses, EgressError, Refusal};
use hickory_resolver::config::{ConnectionConfig, NameServerConfig, ResolverConfig};
use hickory_resolver::net::runtime::TokioRuntimeProvider;
use hickory_resolver::TokioResolver;
use std::net::{IpAddr, SocketAddr};

pub(crate) struct Resolver {
    resolver: TokioResolver,
}

impl Resolver {
    pub fn new(upstream: &[SocketAddr]) -> Result<Resolver, EgressError> {
        if upstream.is_empty() {
            return Err(EgressError::NoNameServer);
        }
        let servers = upstream
            .iter()
            .map(|server| {
                let connection = |mut c: ConnectionConfig| {
                    c.port = server.port();
                    c
                };
                NameServerConfig::new(
                    server.ip(),
                    true,
                    vec![
                        connection(ConnectionConfig::udp()),
                        connection(ConnectionConfig::tcp()),
                    ],
                )
            })
            .collect();
        // No search domains: a sandbox's `foo` never becomes one of the host's names.
        let config = ResolverConfig::from_parts(None, vec![], servers);
        let resolver =
            TokioResolver::builder_with_config(config, TokioRuntimeProvider::default()).build();
        Ok(Resolver {
            resolver: resolver.map_err(|_| EgressError::NoNameServer)?,
        })
    }

    /// The addresses of `name` (normalised, without a trailing dot), all of them allowed.
    pub async fn resolve(&self, name: &str) -> Result<Vec<IpAddr>, Refusal> {
        let not_resolved = |why: String| Refusal::NotResolved {
            host: name.to_string(),
            why,
        };
        let lookup = self
            .resolver
            .lookup_ip(format!("{name}."))
            .await
            .map_err(|e| {
                if e.is_nx_domain() || e.is_no_records_found() {
                    not_resolved("no such name".into())
                } else {
                    not_resolved(e.to_string())
                }
            })?;
        let addresses: Vec<IpAddr> = lookup.iter().collect();
        if let Some((address, why)) = addresses
            .iter()
            .find_map(|a| addresses::denied_reason(*a).map(|why| (*a, why)))
        {
            return Err(Refusal::DeniedAddress {
                host: name.to_string(),
                address,
                why,
            });
        }
        if addresses.is_empty() {
            return Err(not_resolved("no address".into()));
        }
        Ok(addresses)
    }
}
