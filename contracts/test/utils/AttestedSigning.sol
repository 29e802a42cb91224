// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {IRiskGate} from "../../src/interfaces/IRiskGate.sol";

/// @notice What an attestor signs, written here from the specification (EIP-712: domain name
/// "RiskGate", version "2", the chain id, the gate; the `Answer` struct of issue 35), not with
/// the gate's own library, for every test that signs answers.

/// @notice The EIP-712 domain separator of the gate at `gate` on chain `chainId`.
function attestedDomain(address gate, uint256 chainId) pure returns (bytes32) {
    return keccak256(
        abi.encode(
            keccak256(
                "EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)"
            ),
            keccak256("RiskGate"),
            keccak256("2"),
            chainId,
            gate
        )
    );
}

/// @notice keccak256("\x19\x01" ‖ domain ‖ hashStruct(Answer)).
function attestedDigest(
    bytes32 domain,
    address market,
    uint64 readBlock,
    IRiskGate.AttestedRead memory read,
    string memory raw,
    uint64 deadline
) pure returns (bytes32) {
    bytes32 structHash = keccak256(
        abi.encode(
            keccak256(
                "Answer(address market,uint64 readBlock,bytes32 promptHash,bytes32 answerHash,uint256 bestBid,uint256 bestAsk,uint64 deadline)"
            ),
            market,
            readBlock,
            read.promptHash,
            keccak256(bytes(raw)),
            read.bestBid,
            read.bestAsk,
            deadline
        )
    );
    return keccak256(abi.encodePacked(hex"1901", domain, structHash));
}
