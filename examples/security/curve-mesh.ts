// Two MeshNodes that speak CURVE, in one file: every byte between them is encrypted, and each proves
// the key its NodeRid is known by. They find each other (and each other's public keys) through the
// Location Store. It prints the reply and exits. Without REDIS_URL the nodes share an in-memory
// store; with REDIS_URL=redis://host:6379 they use Redis, as separate processes would.
import {
  MemoryLocationStore,
  ZLinkRuntime,
  curveKeysFromEnv,
  zlinkKeyPair,
  type LocationStoreOptions,
  type ZLinkKeyPair,
} from 'nestjs-zlink';

// Each node has its own key pair. `npx nestjs-zlink keygen` prints one as two env lines; keep the
// secret key out of source control (an env var, a mounted file: see curveKeysFromFile).
const gameKeys: ZLinkKeyPair = process.env.ZLINK_CURVE_SECRET_KEY ? curveKeysFromEnv() : zlinkKeyPair();
const lobbyKeys: ZLinkKeyPair = zlinkKeyPair();

const store: LocationStoreOptions = process.env.REDIS_URL
  ? { redis: process.env.REDIS_URL }
  : { instance: new MemoryLocationStore() };

// `security.curve`: this node's key pair. Its descriptor in the store carries the public key, so
// nodes found by discovery connect to that key only; manual peers are given it as `publicKey`.
function meshNode(rid: string, keys: ZLinkKeyPair): ZLinkRuntime {
  return new ZLinkRuntime({
    locationStore: store,
    security: { curve: keys },
    meshes: { world: { rid, discovery: 'auto', listen: { bindHost: '127.0.0.1', port: 0 } } },
  });
}

async function main(): Promise<void> {
  const game = meshNode('game-1', gameKeys);
  game.registerNodeHandler({
    mesh: 'world',
    kind: 'request',
    packet: 'status',
    handler: () => ({ players: 12 }),
    source: 'example',
  });
  const lobby = meshNode('lobby-1', lobbyKeys);
  await game.start();
  await lobby.start();
  await lobby.waitForPeers('world', 1);
  const status = await lobby.routeClient.requestToNode('world', 'game-1', 'status', {}).async();
  console.log(JSON.stringify(status));
  // A refused connection (an unknown key, a plain ZMTP peer, a NodeRid claimed with another key) is
  // an event and a count: none here.
  console.log(`refused: ${game.events.count('security_refused')}`);
  await lobby.close();
  await game.close();
}

void main();
