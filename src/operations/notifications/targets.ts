import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/**
 * Addresses a channel's server may not resolve to unless NOTIFY_ALLOW_PRIVATE_TARGETS is set: a user's webhook
 * must not reach this machine, the private network it stands in, or a cloud's metadata service.
 */
const refused = new BlockList();
for (const [address, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  refused.addSubnet(address, prefix, 'ipv4');
for (const [address, prefix] of [
  ['::', 128],
  ['::1', 128],
  // IPv4-compatible (deprecated, ::a.b.c.d), 6to4 (an IPv4 inside), site-local, discard and documentation ranges.
  ['::', 96],
  ['2002::', 16],
  ['fec0::', 10],
  ['100::', 64],
  ['2001:db8::', 32],
  ['64:ff9b::', 96],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const)
  refused.addSubnet(address, prefix, 'ipv6');

/** Whether an IP address (v4 or v6) is loopback, private, link-local (metadata), multicast or reserved. */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return true;
  return refused.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/**
 * Why the host of `url` may not be sent to (it resolves to a refused address, or not at all: worth a retry), or
 * undefined.
 * Checked right before each send; every address the name resolves to must be public.
 */
export async function privateTargetProblem(url: string): Promise<{ detail: string; retryable: boolean } | undefined> {
  let host: string;
  try {
    host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  } catch {
    return { detail: 'the address is not a valid URL', retryable: false };
  }
  let addresses: string[];
  try {
    addresses = isIP(host) ? [host] : (await lookup(host, { all: true, verbatim: true })).map((entry) => entry.address);
  } catch {
    return { detail: `the host ${host} could not be resolved`, retryable: true };
  }
  // Which address it was is not said: the answer goes to the channel's owner, and would map the inside network.
  return addresses.some(isPrivateAddress)
    ? {
        detail: `the host ${host} resolves to a loopback, private or link-local address (NOTIFY_ALLOW_PRIVATE_TARGETS allows it)`,
        retryable: false,
      }
    : undefined;
}
