import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, twoNodes, type TestApp } from './helpers.js';

/** On 'two-nodes' each request lands on the other node than the last, through inject and through a real port. */
describe('the test app as the run builds it', () => {
  let t: TestApp;
  let built = 0;
  beforeAll(async () => {
    // Each node answers with the order in which it was built.
    const whichNode = async (app: FastifyInstance) => {
      const node = built++;
      app.get('/v1/probe/node', async () => ({ node }));
    };
    t = await buildTestApp({ extraRoutes: whichNode });
  });
  afterAll(() => t.close());

  /** One node throughout, or the two in turn (starting with either: requests before these moved the turn). */
  const inTurn = (nodes: number[]) => (twoNodes ? [nodes[0], 1 - nodes[0]!, nodes[0], 1 - nodes[0]!] : [0, 0, 0, 0]);

  it('sends requests in turn to each node through inject', async () => {
    const nodes = [];
    for (let i = 0; i < 4; i++) nodes.push((await t.app.inject({ url: '/v1/probe/node' })).json().node);
    expect(nodes).toEqual(inTurn(nodes));
    expect(t.nodes).toHaveLength(twoNodes ? 2 : 1);
  });

  it('sends requests in turn to each node over one keep-alive connection to its port', async () => {
    const base = await t.app.listen({ host: '127.0.0.1', port: 0 });
    const nodes = [];
    for (let i = 0; i < 4; i++)
      nodes.push(((await (await fetch(`${base}/v1/probe/node`)).json()) as { node: number }).node);
    expect(nodes).toEqual(inTurn(nodes));
  });
});
