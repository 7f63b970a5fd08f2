import { type WireError, ZLinkError } from '../../core/errors.js';
import type { ObjectRef } from '../../core/objects/index.js';
import type { ObjectKey } from '../../core/ports/index.js';
import { writeObjectFences } from '../wire/index.js';
import type { InboundObjectCall } from './object-dispatch.js';

/** The owner's refusals, in the words and codes the contract gives them. */

export function exists(what: string, ref: ObjectRef): ZLinkError {
  return new ZLinkError(
    'InvalidOperation',
    `${what}: it exists already (generation ${ref.objectGeneration})`,
    {
      details: { reason: 'exists', ref },
    },
  );
}

/** A creation whose claim another node took over before its commit. */
export function creationLost(what: string): ZLinkError {
  return new ZLinkError('Unavailable', `${what}: another node took the object while it was being created`, {
    details: { reason: 'creationLost' },
  });
}

/** A ref (of generation `named`) that is not the current incarnation (`current`): `InvalidOperation`. */
export function staleRef(what: string, named: number, current: number): ZLinkError {
  return new ZLinkError(
    'InvalidOperation',
    `${what}: the ref names generation ${named}, the object is generation ${current}`,
    { details: { reason: 'staleRef', objectGeneration: current } },
  );
}

/** A framework refusal as the wire carries it (see OBJECT_REFUSALS). */
export function refusal(error: ZLinkError): WireError {
  return { code: 'ObjectRefused', message: error.message, details: error.details };
}

/**
 * A call on a route that is not the owner's current one (or for an object not here): it carries the
 * route it came on, so the caller drops exactly that cache entry and never a newer one.
 */
export function staleRoute(rid: string, call: InboundObjectCall): WireError {
  return {
    code: 'ObjectStale',
    message: `node '${rid}' is not the current owner of ${call.objectKind} '${call.id}' on that route`,
    details: {
      reason: 'staleRoute',
      objectKind: call.objectKind,
      id: call.id,
      fences: writeObjectFences(call.fences),
    },
  };
}

/**
 * A call to an every-turn persistent object whose state the store has not taken since its last turn:
 * `Rejected`, `details.reason: 'stateNotSaved'`; it never ran (docs/objects.md#durable-objects).
 */
export function stateNotSavedRefusal(a: { readonly key: ObjectKey }, why: string): ZLinkError {
  return new ZLinkError(
    'Rejected',
    `${a.key.kind} '${a.key.id}' takes no new work until its state is saved (${why})`,
    { details: { reason: 'stateNotSaved' } },
  );
}
