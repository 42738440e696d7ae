// The UDP port an emulated IPMI BMC is reached on: a relay in front of
// ipmi_sim that answers one request itself and passes every other datagram
// through unchanged.
//
// ipmitool 1.8.19 (Debian bookworm) opens every lanplus session by asking Get
// Channel Cipher Suites (IPMI 2.0 §22.15, netfn App 0x06, cmd 0x54) outside a
// session, in the RMCP+ format (auth type 6). ipmi_sim of OpenIPMI 2.0.33
// answers that command only in the IPMI 1.5 format and drops the RMCP+ one
// ("No session message failed: Invalid authtype: 6"), so without -C each
// ipmitool call waits about 10 s for four unanswered retries before falling
// back. A real BMC answers it; so does this relay, with the one cipher suite
// ipmi_sim implements: 3 (RAKP-HMAC-SHA1, HMAC-SHA1-96, AES-CBC-128).
import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';

const RMCP_PLUS = 0x06;
const NETFN_APP = 0x06;
const GET_CHANNEL_CIPHER_SUITES = 0x54;
/** Standard cipher suite record: start 0xc0, id 3, auth 0x01, integrity 0x40|0x01, confidentiality 0x80|0x01. */
const SUITE_3 = [0xc0, 0x03, 0x01, 0x41, 0x81];
/** The LAN channel of the emulated BMC (lan.conf `startlan 1`). */
const LAN_CHANNEL = 1;
const IDLE_MS = 30_000;

/** Two's complement checksum of IPMI (the bytes plus it sum to 0 mod 256). */
function checksum(bytes: number[]): number {
  return -bytes.reduce((a, b) => a + b, 0) & 0xff;
}

/** The reply to a session-less RMCP+ Get Channel Cipher Suites, or undefined for any other datagram. */
export function cipherSuitesReply(msg: Buffer): Buffer | undefined {
  // RMCP header (4), auth type, payload type, session id (4), sequence (4), payload length (2), IPMI message
  if (msg.length < 16 + 7 || msg[0] !== 0x06 || msg[3] !== 0x07 || msg[4] !== RMCP_PLUS) return undefined;
  if (((msg[5] ?? 0) & 0x3f) !== 0 || msg.readUInt32LE(6) !== 0) return undefined;
  const len = msg.readUInt16LE(14);
  const ipmi = msg.subarray(16, 16 + len);
  if (ipmi.length < 7 || (ipmi[1] ?? 0) >> 2 !== NETFN_APP || ipmi[5] !== GET_CHANNEL_CIPHER_SUITES) return undefined;
  const [rsAddr = 0x20, netFnLun = 0, , rqAddr = 0x81, seqLun = 0] = ipmi;
  const listIndex = (ipmi[8] ?? 0) & 0x3f;
  const head = [rqAddr, ((NETFN_APP | 1) << 2) | (seqLun & 0x03)];
  const body = [rsAddr, (seqLun & 0xfc) | (netFnLun & 0x03), GET_CHANNEL_CIPHER_SUITES, 0x00, LAN_CHANNEL];
  // the whole list fits in the first block; a later index gets an empty one, which ends ipmitool's loop
  if (listIndex === 0) body.push(...SUITE_3);
  const reply = [...head, checksum(head), ...body, checksum(body)];
  const out = Buffer.alloc(16 + reply.length);
  Buffer.from([0x06, 0x00, 0xff, 0x07, RMCP_PLUS, 0x00]).copy(out, 0);
  out.writeUInt16LE(reply.length, 14);
  Buffer.from(reply).copy(out, 16);
  return out;
}

export interface IpmiFront {
  port: number;
  close(): Promise<void>;
}

/** Listens on 127.0.0.1:port and relays to ipmi_sim on 127.0.0.1:backendPort, one upstream socket per client. */
export async function startIpmiFront(port: number, backendPort: number): Promise<IpmiFront> {
  const front = createSocket('udp4');
  const upstreams = new Map<string, { socket: Socket; timer: NodeJS.Timeout; connected: Promise<void> }>();
  const upstreamFor = (client: RemoteInfo): { socket: Socket; connected: Promise<void> } => {
    const key = `${client.address}:${client.port}`;
    const known = upstreams.get(key);
    const drop = () => {
      const u = upstreams.get(key);
      upstreams.delete(key);
      u?.socket.close();
    };
    if (known) {
      known.timer.refresh();
      return known;
    }
    const socket = createSocket('udp4');
    socket.on('message', (reply) => front.send(reply, client.port, client.address));
    socket.on('error', drop);
    // connect() is asynchronous: datagrams wait for it
    const connected = new Promise<void>((resolve) => socket.connect(backendPort, '127.0.0.1', resolve));
    const timer = setTimeout(drop, IDLE_MS);
    timer.unref();
    socket.unref();
    const entry = { socket, timer, connected };
    upstreams.set(key, entry);
    return entry;
  };
  front.on('message', (msg, client) => {
    const reply = cipherSuitesReply(msg);
    if (reply) return void front.send(reply, client.port, client.address);
    const up = upstreamFor(client);
    void up.connected.then(() => up.socket.send(msg, () => undefined));
  });
  await new Promise<void>((resolve, reject) => {
    front.once('error', reject);
    front.bind(port, '127.0.0.1', () => {
      front.off('error', reject);
      resolve();
    });
  });
  front.on('error', () => undefined);
  front.unref();
  return {
    port,
    close: async () => {
      for (const { socket, timer } of upstreams.values()) {
        clearTimeout(timer);
        socket.close();
      }
      upstreams.clear();
      await new Promise<void>((resolve) => front.close(() => resolve()));
    },
  };
}
