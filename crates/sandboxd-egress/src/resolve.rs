//! Names resolved by the service itself, never by the sandbox: the addresses returned are the
//! ones connected to, and a name with any denied address is refused whole (DNS rebinding).

use crate::addresses;
use crate::error::EgressError;
use crate::policy::Refusal;
use hickory_resolver::config::{ConnectionConfig, NameServerConfig, ResolverConfig};
use hickory_resolver::net::runtime::TokioRuntimeProvider;
use hickory_resolver::TokioResolver;
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

pub(crate) struct Resolver {
    resolver: TokioResolver,
    timeout: Duration,
}

impl Resolver {
    /// `timeout` bounds a lookup in all, whatever the upstream servers do.
    pub fn new(upstream: &[SocketAddr], timeout: Duration) -> Result<Resolver, EgressError> {
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
        let mut builder =
            TokioResolver::builder_with_config(config, TokioRuntimeProvider::default());
        // One retry of a lost datagram still fits in the lookup's time.
        let options = builder.options_mut();
        options.timeout = timeout / 2;
        options.attempts = 1;
        Ok(Resolver {
            resolver: builder.build().map_err(|_| EgressError::NoNameServer)?,
            timeout,
        })
    }

    /// The addresses of `name` (normalised, without a trailing dot), all of them allowed.
    pub async fn resolve(&self, name: &str) -> Result<Vec<IpAddr>, Refusal> {
        let not_resolved = |why: String| Refusal::NotResolved {
            host: name.to_string(),
            why,
        };
        let lookup =
            tokio::time::timeout(self.timeout, self.resolver.lookup_ip(format!("{name}.")))
                .await
                .map_err(|_| Refusal::Timeout(format!("the name servers for {name}")))?
                .map_err(|e| {
                    if e.is_nx_domain() || e.is_no_records_found() {
                        not_resolved("no such name".into())
                    } else {
                        // A failure, not an answer: the sandbox gets SERVFAIL, not NXDOMAIN
                        // (which its resolver would cache as the name not existing).
                        Refusal::Unreachable {
                            host: format!("the name servers for {name}"),
                            why: e.to_string(),
                        }
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
