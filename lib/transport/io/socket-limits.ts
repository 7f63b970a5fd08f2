/**
 * The largest zeromq message any ZLink socket accepts (one message may batch many records). zeromq
 * drops a peer's connection at the first larger one, so no peer — server, client, mesh peer or
 * publisher — can make this process buffer an arbitrarily large frame.
 */
export const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;
