// Package netguard keeps webhook deliveries from reaching the network they are
// sent from (server-side request forgery). The check runs in the dialer, after
// DNS resolution, on the address actually dialled, so a host name that
// resolves to an internal address, or rebinds to one between checks, is
// refused all the same. Loopback, private, link-local (cloud metadata),
// CGNAT, unique-local, multicast, broadcast, unspecified and reserved
// addresses are refused, in IPv4, IPv6 and IPv4-mapped or embedded forms,
// unless a configured allowlist of prefixes covers them. A denylist
// (Guard.Deny: the VPC the deliver function runs in with static egress)
// wins over the allowlist.
package netguard
