// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {RiskGate} from "../../../src/RiskGate.sol";
import {IRiskGate} from "../../../src/interfaces/IRiskGate.sol";
import {BinaryMarket} from "../../../src/venue/BinaryMarket.sol";
import {MarketFactory} from "../../../src/venue/MarketFactory.sol";
import {attestedDomain, attestedDigest} from "../../utils/AttestedSigning.sol";
import {GateHandler, IFaucetToken} from "./GateHandler.sol";

/// @notice `GateHandler`'s world around an attested gate (three attestors, k = 2): the keeper
/// no longer relays answers but sends the attestors' signed answers, alone (`submitAttested`)
/// or in batches (`submitAttestedVerdicts`), each batch also sent one call at a time from the
/// same state and compared. The attestors read the book as it stands, sign mostly agreeing
/// answers (sometimes one, or the hostile answers `GateHandler` draws), and now and then a key
/// outside the set signs instead; a mempool trader may move the book after they read, and the
/// keeper's quote may be compromised or stale. Every call runs in a block of its own, above
/// every earlier read, so that the replay rule refuses only what a batch names twice.
// The handler moves the clock itself; comparing with it is the point, not a validator risk.
// forge-lint: disable-start(block-timestamp)
contract AttestedGateHandler is GateHandler {
    /// @dev The attestors' keys, ascending by address (as the set's signers).
    uint256[3] internal attestorKeys;
    /// @dev Signs in place of an attestor one answer in sixteen: its signature never counts.
    uint256 internal immutable outsiderKey = uint256(keccak256("attested handler outsider"));

    /// @dev Attested calls sent alone, and answers signed by the outsider.
    uint256 public ghost_attestedSingles;
    uint256 public ghost_forgedAnswers;

    constructor(
        RiskGate gate_,
        MarketFactory venue_,
        IFaucetToken token_,
        address keeper_,
        address owner_,
        address honest_,
        address hostile_,
        address untrusted_,
        uint256[3] memory attestorKeys_
    ) GateHandler(gate_, venue_, token_, keeper_, owner_, honest_, hostile_, untrusted_, false) {
        attestorKeys = attestorKeys_;
    }

    /// @notice One attested call, drawn by `_attestedCall`, in a block of its own.
    function submitAttested(uint256 seed) external {
        vm.roll(block.number + 1);
        // Hashed: the fuzzer's seeds are often small, and every draw reads high bits too.
        bytes memory data =
            _attestedCall(uint256(keccak256(abi.encode(seed))), uint64(block.number));
        vm.prank(keeper);
        (bool ok, bytes memory ret) = address(gate).call(data);
        // Every call drawn names a factory market at the current block, with a well-formed
        // read: the gate decides it. A revert is a bug the invariant suite should see.
        require(ok, "an attested call reverted");
        uint8 reason = abi.decode(ret, (uint8));
        ghost_attestedSingles += 1;
        ghost_decisions += 1;
        ghost_reasons[reason] += 1;
        if (reason == 0) ghost_passes += 1;
    }

    /// @notice Up to six attested calls, drawn as `submitAttested` draws one, sent both ways from
    /// the same state: one at a time, then (the state put back) as one `submitAttestedVerdicts`
    /// batch, which is what stays. The reasons, the gate's logs byte for byte and everything a
    /// decision can change must be the same; any difference counts in `ghost_batchMismatches`.
    function submitAttestedBatch(uint256 seed, uint8 count) external {
        // Past every read of the batches before (the oldest read below is 5 blocks back).
        vm.roll(block.number + 6);
        uint256 n = 1 + (count % 6);
        // Three batches in four read one block per element, oldest first, so that two elements
        // on one market both count; the fourth reads every element at this block, so the
        // replay rule refuses a market's second element (21), as it would a second single call.
        bool oneRead = seed % 4 == 0;
        bytes[] memory calls = new bytes[](n);
        bytes[] memory elements = new bytes[](n);
        for (uint256 i; i < n; ++i) {
            uint64 rb = uint64(oneRead ? block.number : block.number - (n - 1 - i));
            calls[i] = _attestedCall(uint256(keccak256(abi.encode(seed, i))), rb);
            elements[i] = _afterSelector(calls[i]);
        }
        _bothWays(calls, abi.encodeCall(gate.submitAttestedVerdicts, (elements)));
    }

    /// @dev One keeper call: a market (three in four still open for trading, most with a fresh
    /// book), one to three of the attestors (see `_answers`) answering about the book at
    /// the current block, the keeper's quote for their leaning answer, and, one time in four,
    /// a trader who lifts the best ask between the read and the call.
    function _attestedCall(uint256 r, uint64 rb) internal returns (bytes memory) {
        BinaryMarket m = r % 4 == 0 ? _market(r) : _openMarket(r);
        if ((r >> 8) % 4 != 0) _makeBook(m, r >> 16);
        // The attestors lean to a buy four times in six, to ABSTAIN or to any answer drawn
        // (mostly hostile) once each.
        uint256 l = (r >> 24) % 6;
        string memory lean = l == 0
            ? answers[(r >> 28) % answers.length]
            : l == 1 ? "ABSTAIN" : ((r >> 32) % 2 == 0 ? "BUY_UP" : "BUY_DOWN");
        IRiskGate.AttestedRead memory read =
            IRiskGate.AttestedRead(keccak256(abi.encode("prompt", r)), m.bestBid(), m.bestAsk());
        IRiskGate.Quote memory q = _keeperQuote(m, lean, r >> 40);
        if (q.deadline == 0) q.deadline = uint64(block.timestamp) + 60;
        (string[] memory raws, bytes[] memory sigs) = _answers(r, m, rb, read, lean, q.deadline);
        if ((r >> 100) % 4 == 0) _sandwich(m, r >> 104);
        return bytes.concat(
            abi.encodeCall(gate.submitAttested, (address(m), rb, raws, sigs, q)), abi.encode(read)
        );
    }

    /// @dev 2 or 3 answers, or one time in six a single one (never enough: 21), from distinct
    /// attestors in ascending order,
    /// five in six agreeing with `lean`, the others any answer drawn; one in sixteen signed by
    /// the outsider instead.
    function _answers(
        uint256 r,
        BinaryMarket m,
        uint64 rb,
        IRiskGate.AttestedRead memory read,
        string memory lean,
        uint64 deadline
    ) internal returns (string[] memory raws, bytes[] memory sigs) {
        uint256 count = (r >> 64) % 6 == 0 ? 1 : 2 + (r >> 67) % 2;
        uint256[] memory who = new uint256[](count);
        for (uint256 i; i < count; ++i) {
            who[i] = ((r >> 66) % 3 + i) % 3;
        }
        for (uint256 i = 1; i < count; ++i) {
            for (uint256 j = i; j > 0 && who[j - 1] > who[j]; --j) {
                (who[j - 1], who[j]) = (who[j], who[j - 1]);
            }
        }
        raws = new string[](count);
        sigs = new bytes[](count);
        for (uint256 i; i < count; ++i) {
            uint256 s = r >> (72 + 8 * i);
            raws[i] = s % 6 != 0 ? lean : answers[(s >> 3) % answers.length];
            uint256 key = attestorKeys[who[i]];
            if ((s >> 6) % 16 == 0) {
                key = outsiderKey;
                ghost_forgedAnswers += 1;
            }
            sigs[i] = _sign(key, m, rb, read, raws[i], deadline);
        }
    }

    /// @dev `key`'s 65-byte signature `r ‖ s ‖ v` of `raw` about `m` read at block `rb`.
    function _sign(
        uint256 key,
        BinaryMarket m,
        uint64 rb,
        IRiskGate.AttestedRead memory read,
        string memory raw,
        uint64 deadline
    ) internal view returns (bytes memory) {
        bytes32 domain = attestedDomain(address(gate), block.chainid);
        bytes32 digest = attestedDigest(domain, address(m), rb, read, raw, deadline);
        (uint8 v, bytes32 r, bytes32 s) = vm.sign(key, digest);
        return abi.encodePacked(r, s, v);
    }

    /// @dev `data` without its 4-byte selector: one element of `submitAttestedVerdicts`.
    function _afterSelector(bytes memory data) internal pure returns (bytes memory e) {
        e = new bytes(data.length - 4);
        for (uint256 i; i < e.length; ++i) {
            e[i] = data[i + 4];
        }
    }
}
// forge-lint: disable-end(block-timestamp)
