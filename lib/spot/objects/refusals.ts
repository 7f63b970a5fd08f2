import { type ObjectRef, type WireError, ZLinkError } from '../../core/index.js';

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

export function staleRef(what: string, ref: ObjectRef, current: number): ZLinkError {
  return new ZLinkError(
    'InvalidOperation',
    `${what}: the ref names generation ${ref.objectGeneration}, the object is generation ${current}`,
    { details: { reason: 'staleRef', objectGeneration: current } },
  );
}

/** A framework refusal as the wire carries it (see OBJECT_REFUSALS). */
export function refusal(error: ZLinkError): WireError {
  return { code: 'ObjectRefused', message: error.message, details: error.details };
}
