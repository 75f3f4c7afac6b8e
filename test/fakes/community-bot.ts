import { openSocket, type TestSocket, type WsMessage } from '../ws-client.js';

/** How the scripted bot answers the next sync request. */
export type BotBehaviour =
  | { answer: 'data'; guilds?: object[]; channels?: object[]; roles?: object[]; members?: object[]; batchSize?: number }
  | { answer: 'error'; error: string; afterBatches?: { members: object[] } }
  | { answer: 'ignore' }
  /** Sends a first batch of members and then nothing more (the test may send the rest itself, late). */
  | { answer: 'stall'; members: object[] };

/**
 * A community bot as the real one behaves on the wire: it connects to /v1/ws with the system key,
 * identifies itself, and answers each SyncRequest with SyncData batches (or SyncError, or not at all).
 */
export async function connectCommunityBot(base: string, systemKey: string) {
  const socket: TestSocket = await openSocket(base, { headers: { authorization: `Bearer ${systemKey}` } });
  await socket.next('Welcome');
  await socket.request({ type: 'Identify', client: 'community_bot' }, 'Identified');
  const script: BotBehaviour[] = [];
  const requests: WsMessage[] = [];

  socket.socket.on('message', (raw) => {
    const message = JSON.parse(raw.toString()) as WsMessage;
    if (message.type !== 'SyncRequest') return;
    requests.push(message);
    const behaviour = script.shift() ?? { answer: 'ignore' };
    const requestId = message.requestId as string;
    if (behaviour.answer === 'ignore') return;
    if (behaviour.answer === 'stall')
      return socket.send({ type: 'SyncData', requestId, members: behaviour.members, done: false });
    if (behaviour.answer === 'error') {
      if (behaviour.afterBatches)
        socket.send({ type: 'SyncData', requestId, members: behaviour.afterBatches.members, done: false });
      socket.send({ type: 'SyncError', requestId, error: behaviour.error });
      return;
    }
    const { guilds = [], channels = [], roles = [], members = [], batchSize = 150 } = behaviour;
    if (message.scope === 'guilds')
      return socket.send({ type: 'SyncData', requestId, guilds, channels, roles, done: true });
    for (let at = 0; at < members.length || at === 0; at += batchSize) {
      socket.send({
        type: 'SyncData',
        requestId,
        members: members.slice(at, at + batchSize),
        done: at + batchSize >= members.length,
      });
    }
  });

  return {
    socket,
    /** Requests received so far. */
    requests,
    /** Queues how the next request is answered. */
    will: (behaviour: BotBehaviour) => void script.push(behaviour),
    close: () => socket.close(),
  };
}
