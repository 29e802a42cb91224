// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
import {Verdict, Verdicts} from "./GateTypes.sol";
import {Units} from "./Units.sol";

/// @title Attestation
/// @notice The attested mode's pure parts: what an attestor signs (EIP-712), how a signature is
/// read, how the vote is counted and how far the attested book bounds the price.
library Attestation {
    /// @notice The typed data each attestor signs for one answer.
    bytes32 internal constant ANSWER_TYPEHASH = keccak256(
        "Answer(address market,uint64 readBlock,bytes32 promptHash,bytes32 answerHash,uint256 bestBid,uint256 bestAsk,uint64 deadline)"
    );
    bytes32 internal constant DOMAIN_TYPEHASH = keccak256(
        "EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)"
    );
    bytes32 internal constant NAME_HASH = keccak256("RiskGate");
    bytes32 internal constant VERSION_HASH = keccak256("2");
    /// @notice A signature is `r ‖ s ‖ v`, 65 bytes.
    uint256 internal constant SIGNATURE_BYTES = 65;
    /// @notice The index of the unparseable answers' count in a vote's counts.
    uint256 internal constant UNPARSEABLE = 3;

    /// @notice The domain separator of `gate` on the current chain.
    function domainSeparator(address gate) internal view returns (bytes32) {
        return keccak256(abi.encode(DOMAIN_TYPEHASH, NAME_HASH, VERSION_HASH, block.chainid, gate));
    }

    /// @notice The domain separator followed by the `Answer` struct's encoding with
    /// `answerHash` left 0: every answer of one call shares the rest, so it is encoded once and
    /// each answer's hash written into it.
    function answerTemplate(
        bytes32 domain,
        address market,
        uint64 readBlock,
        bytes32 promptHash,
        uint256 bestBid,
        uint256 bestAsk,
        uint64 deadline
    ) internal pure returns (bytes memory) {
        return abi.encode(
            domain,
            ANSWER_TYPEHASH,
            market,
            readBlock,
            promptHash,
            bytes32(0),
            bestBid,
            bestAsk,
            deadline
        );
    }

    /// @notice The EIP-712 digest of the `Answer` in `template` with `answerHash` written in
    /// (the template keeps it).
    function digest(bytes memory template, bytes32 answerHash) internal pure returns (bytes32 d) {
        assembly ("memory-safe") {
            // Word 5 of the template: domain, typehash, market, readBlock, promptHash, answerHash.
            mstore(add(template, 0xc0), answerHash)
            // The struct's eight words follow the domain.
            let structHash := keccak256(add(template, 0x40), 0x100)
            let p := mload(0x40)
            mstore(p, hex"1901")
            mstore(add(p, 0x02), mload(add(template, 0x20)))
            mstore(add(p, 0x22), structHash)
            d := keccak256(p, 0x42)
        }
    }

    /// @notice The signer of `digest`, or 0 for a signature that is not 65 bytes, has a high `s`
    /// (the malleable twin of a valid one) or does not recover.
    function signer(bytes32 d, bytes calldata sig) internal pure returns (address) {
        if (sig.length != SIGNATURE_BYTES) return address(0);
        bytes32 r;
        bytes32 s;
        uint8 v;
        assembly ("memory-safe") {
            r := calldataload(sig.offset)
            s := calldataload(add(sig.offset, 0x20))
            v := byte(0, calldataload(add(sig.offset, 0x40)))
        }
        // The third value only details the error, which is answered as 0 whatever it was.
        // slither-disable-next-line unused-return
        (address who, ECDSA.RecoverError err,) = ECDSA.tryRecover(d, v, r, s);
        return err == ECDSA.RecoverError.NoError ? who : address(0);
    }

    /// @notice The verdict `threshold` answers gave, if exactly one verdict reached it. Only the
    /// three verdicts count; unparseable answers never make a verdict.
    function winner(uint8[4] memory counts, uint8 threshold)
        internal
        pure
        returns (bool found, Verdict verdict)
    {
        for (uint8 v; v < UNPARSEABLE; ++v) {
            if (counts[v] >= threshold) {
                // Two verdicts at the threshold (possible only when 2k <= n) is no agreement.
                if (found) return (false, Verdicts.INVALID);
                (found, verdict) = (true, Verdict.wrap(v));
            }
        }
        if (!found) verdict = Verdicts.INVALID;
    }

    /// @notice The most the gate may pay for the side `verdict` buys: the attested best price of
    /// that side plus `maxSlippageBps` of it, rounded down. BUY_UP pays the ask; BUY_DOWN pays
    /// `1e6 - bestBid`. An empty attested side (ask or bid 0) allows nothing: the attestors saw
    /// no price to pay. A book value of 1e6 or more is passed through unchanged (a price outside
    /// every band, which the band rule refuses).
    function priceLimit(Verdict verdict, uint256 bestBid, uint256 bestAsk, uint16 maxSlippageBps)
        internal
        pure
        returns (uint256)
    {
        uint256 price;
        if (verdict == Verdicts.BUY_UP) {
            price = bestAsk;
        } else {
            if (bestBid == 0) return 0;
            price = bestBid >= Units.ONE ? 0 : Units.ONE - bestBid;
        }
        if (price == 0 || price >= Units.ONE) return price;
        return price + price * maxSlippageBps / Units.BPS;
    }
}
