// The jest environment of every suite: Node's, with one link between jest's sandbox and the host process.
//
// jest gives the code under test a copy of `process`, but native addons call the host's. zeromq.js's addon
// warns through the host's `process.emitWarning` when a bound ROUTER connects with a routing id (the mesh
// does so on purpose: that option names the pipe of that one connect), and the mesh swaps
// `process.emitWarning` around exactly that call. In a plain Node process that swap reaches the addon; in
// the sandbox it only changed the copy, so the warning reached the test log. Here the sandbox's
// `emitWarning` is the host's property itself, so the code behaves as it does outside jest. Every other
// warning still prints.
import NodeEnvironment from 'jest-environment-node';

export default class ZLinkTestEnvironment extends NodeEnvironment {
  constructor(config, context) {
    super(config, context);
    const host = process;
    Object.defineProperty(this.global.process, 'emitWarning', {
      configurable: true,
      get: () => host.emitWarning,
      set: (emitWarning) => {
        host.emitWarning = emitWarning;
      },
    });
  }
}
