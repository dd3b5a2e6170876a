/** A keep-alive HTTP client with little overhead of its own, for latency figures. */
import { Agent, request } from "node:http";

const agent = new Agent({ keepAlive: true, maxSockets: 64 });

/** A client that never queues a request on its side: for open-loop arrivals (overload). */
export const unboundedAgent = new Agent({ keepAlive: true, maxSockets: Infinity });

export function post(url: string, body: string, token: string, via: Agent = agent): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: "POST", agent: via, headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "content-length": Buffer.byteLength(body) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

export async function get(url: string, token: string): Promise<string> {
  const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  return res.text();
}
